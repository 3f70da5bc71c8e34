/// A glob over a leak's path of node names joined by `/`, as a baseline entry gives it.
///
/// It matches the whole path, from the root. Each `/`-separated part matches one node name:
/// `*` in a part matches any run of characters and `?` one character (`Legacy*`, `*Flow`), and a
/// part that is exactly `**` matches any number of names, none included. So `AppFlow/*/ProfileFlow`
/// is ProfileFlow two levels below AppFlow, and `**/LegacyFlow` is LegacyFlow anywhere.
package struct BaselinePathPattern: Sendable, Equatable, CustomStringConvertible {
    /// The pattern as written.
    package let text: String
    private let parts: [String]

    /// Nil for an empty pattern or one with an empty part (`A//B`, `/A`, `A/`).
    package init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard !text.isEmpty, !parts.contains(where: \.isEmpty) else { return nil }
        self.text = text
        self.parts = parts
    }

    /// The pattern as written.
    package var description: String { text }

    /// Whether the pattern matches the whole path.
    package func matches(_ path: [String]) -> Bool {
        // matched[i][j]: parts[i...] match path[j...]. Filled from the end.
        let (p, n) = (parts.count, path.count)
        var matched = Array(repeating: Array(repeating: false, count: n + 1), count: p + 1)
        matched[p][n] = true
        for i in stride(from: p - 1, through: 0, by: -1) {
            for j in stride(from: n, through: 0, by: -1) {
                if parts[i] == "**" {
                    matched[i][j] = matched[i + 1][j] || (j < n && matched[i][j + 1])
                } else {
                    matched[i][j] = j < n && Self.wildcard(parts[i], matches: path[j]) && matched[i + 1][j + 1]
                }
            }
        }
        return matched[0][0]
    }

    /// `*` (any run of characters) and `?` (one character) against one name.
    static func wildcard(_ pattern: String, matches name: String) -> Bool {
        let pattern = Array(pattern)
        let name = Array(name)
        var (p, n) = (0, 0)
        var star: (p: Int, n: Int)?
        while n < name.count {
            if p < pattern.count, pattern[p] == "?" || pattern[p] == name[n] {
                p += 1
                n += 1
            } else if p < pattern.count, pattern[p] == "*" {
                star = (p, n)
                p += 1
            } else if let last = star {
                // Let the last star take one more character.
                p = last.p + 1
                n = last.n + 1
                star = (last.p, last.n + 1)
            } else {
                return false
            }
        }
        while p < pattern.count, pattern[p] == "*" { p += 1 }
        return p == pattern.count
    }
}
