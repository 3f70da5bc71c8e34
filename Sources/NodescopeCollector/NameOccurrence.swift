/// Which occurrence of its name a node is among its siblings, told the same way wherever a
/// node is named by its path (`diff`, the holder of a retainer path): the attached siblings of
/// a name come first, in attach order, then the others (detached, leaked, placeholders), in
/// attach order; the first is named plainly, the second `#1`, the third `#2`.
///
/// ```swift
/// // The second login's LoggedInFlow (attached) beside the first one's ghost:
/// NameOccurrence.numbers(keys: ["LoggedInFlow", "LoggedInFlow"], attached: [false, true])  // [1, 0]
/// ```
public enum NameOccurrence {
    /// The occurrence number of each item of `keys` (in attach order; a key is a name, or a
    /// parent and a name), with `attached[i]` telling whether item i is attached (and not a
    /// placeholder): 0 for the first of its key, 1 for the second, and so on.
    public static func numbers<Key: Hashable>(keys: [Key], attached: [Bool]) -> [Int] {
        var attachedCount: [Key: Int] = [:]
        for (key, isAttached) in zip(keys, attached) where isAttached { attachedCount[key, default: 0] += 1 }
        var seenAttached: [Key: Int] = [:]
        var seenOthers: [Key: Int] = [:]
        return zip(keys, attached).map { key, isAttached in
            if isAttached {
                defer { seenAttached[key, default: 0] += 1 }
                return seenAttached[key, default: 0]
            }
            defer { seenOthers[key, default: 0] += 1 }
            return attachedCount[key, default: 0] + seenOthers[key, default: 0]
        }
    }

    /// `name` with its occurrence: unchanged for the first, `name#N` for the others.
    public static func suffixed(_ name: String, _ number: Int) -> String {
        number == 0 ? name : "\(name)#\(number)"
    }
}
