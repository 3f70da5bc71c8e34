/// llvm-symbolizer's answer, read: for each address it printed one or more (function, place) line
/// pairs (the innermost inlined frame first) and an empty line. The place kept is the last frame's,
/// the function that holds the address itself.
enum SymbolizerOutput {
    /// A source place.
    struct Place: Equatable {
        var file: String?
        var line: Int?
        var column: Int?
    }

    /// The place of each of `count` addresses, in order; all nil when the output does not hold
    /// exactly `count` answers.
    static func places(in text: String, count: Int) -> [Place?] {
        var blocks: [[Substring]] = []
        var current: [Substring] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.hasSuffix("\r") ? line.dropLast() : line
            if trimmed.isEmpty {
                if !current.isEmpty { blocks.append(current) }
                current = []
            } else {
                current.append(trimmed)
            }
        }
        if !current.isEmpty { blocks.append(current) }
        guard blocks.count == count else { return Array(repeating: nil, count: count) }
        return blocks.map { block in
            guard block.count >= 2, block.count % 2 == 0, let last = block.last else { return nil }
            return place(last)
        }
    }

    /// `file:line:column` (or `file:line`) read from the right; nil when the file is unknown (`??`)
    /// or compiler-generated.
    static func place(_ text: Substring) -> Place? {
        var parts = text.split(separator: ":", omittingEmptySubsequences: false)
        var numbers: [Int] = []
        while numbers.count < 2, parts.count > 1, let last = parts.last, let number = Int(last), number >= 0 {
            numbers.insert(number, at: 0)
            parts.removeLast()
        }
        guard !numbers.isEmpty else { return nil }
        let file = parts.joined(separator: ":")
        guard !file.isEmpty, file != "??", !file.contains("<compiler-generated>") else { return nil }
        let line = numbers[0] > 0 ? numbers[0] : nil
        let column = numbers.count > 1 && numbers[1] > 0 ? numbers[1] : nil
        return Place(file: file, line: line, column: column)
    }
}
