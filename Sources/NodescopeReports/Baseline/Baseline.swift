import Foundation
import NodescopeCollector

/// The leaks a project knows about and accepts for now, each with a reason: `check` reports them
/// as known and does not fail on them. See docs/CHECK.md for the file format.
///
/// ```json
/// {
///   "version": 1,
///   "entries": [
///     { "fingerprint": "3f2a9c0d1e4b5a67", "path": "AppFlow/LegacyFlow", "reason": "static cache, TICKET-12" },
///     { "path": "**/ChatFlow", "reason": "the chat SDK keeps its delegate until 2.0" }
///   ]
/// }
/// ```
package struct Baseline: Sendable {
    /// One accepted leak (or family of leaks).
    package struct Entry: Sendable {
        /// A leak fingerprint (16 lowercase hexadecimal digits), if the entry names one.
        package var fingerprint: String?
        /// A glob over the leak's path, if the entry gives one.
        package var path: BaselinePathPattern?
        /// Why the leak is accepted.
        package var reason: String
        /// Where the entry starts in the file.
        package var line: Int
        /// Its position in `entries`, from 1.
        package var number: Int

        /// Whether the entry covers a leak: its fingerprint (when given) is the leak's, and its
        /// path pattern (when given) matches the leak's path.
        package func matches(fingerprint leakFingerprint: String, path leakPath: [String]) -> Bool {
            (fingerprint.map { $0 == leakFingerprint } ?? true) && (path.map { $0.matches(leakPath) } ?? true)
        }

        /// `fingerprint 3f2a9c0d1e4b5a67 (AppFlow/LegacyFlow)` or `path **/ChatFlow`.
        package var label: String {
            switch (fingerprint, path) {
            case (let fingerprint?, let path?): "fingerprint \(fingerprint) (\(path))"
            case (let fingerprint?, nil): "fingerprint \(fingerprint)"
            case (nil, let path?): "path \(path)"
            case (nil, nil): "entry \(number)"
            }
        }
    }

    /// The most entries a baseline may have (docs/CHECK.md); the file itself may be at most
    /// 16 MiB.
    package static let maxEntries = 100_000

    /// The placeholder reason that `--write-baseline` writes.
    package static let placeholderReason = "TODO: explain why this leak is accepted"

    /// The entries, in file order.
    package var entries: [Entry]

    /// Entries whose reason is still a placeholder ("TODO…", as `--write-baseline` writes it):
    /// accepted, but `check` warns, because a baseline exists to say why.
    package var entriesWithoutReason: [Entry] {
        entries.filter { $0.reason.trimmingCharacters(in: .whitespaces).uppercased().hasPrefix("TODO") }
    }

    /// The first entry that covers a leak, if any.
    package func entry(matchingFingerprint fingerprint: String, path: [String]) -> Entry? {
        entries.first { $0.matches(fingerprint: fingerprint, path: path) }
    }

    // MARK: Reading

    /// Reads and checks the bytes of a baseline file; every problem is an error that names the
    /// file, line and field.
    package static func parse(_ bytes: [UInt8], file: String) throws(ReportError) -> Baseline {
        do {
            return try parse(bytes)
        } catch {
            throw ReportError("bad baseline \(file):\(error.line):\(error.column): \(error.message)")
        }
    }

    /// Parses a baseline document.
    static func parse(_ bytes: [UInt8]) throws(BaselineError) -> Baseline {
        let document = try BaselineJSONReader.read(bytes)
        guard case .object(let members) = document.kind else {
            throw BaselineError(
                line: document.line, column: document.column,
                message: "a baseline is a JSON object with \"version\": 1 and \"entries\", not \(document.kindName)")
        }
        var version: BaselineJSONValue?
        var list: BaselineJSONValue?
        for member in members {
            switch member.key {
            case "version": version = member.value
            case "entries": list = member.value
            default:
                throw BaselineError(
                    line: member.line, column: member.column,
                    message: "unknown field \"\(member.key)\"; a baseline has only \"version\" and \"entries\"")
            }
        }
        guard let version else {
            throw BaselineError(
                line: document.line, column: document.column, message: "the field \"version\" is missing; add \"version\": 1")
        }
        guard case .number(1) = version.kind else {
            throw BaselineError(
                line: version.line, column: version.column,
                message: "\"version\" must be 1 (the only version this nodescope reads)")
        }
        guard let list else {
            throw BaselineError(
                line: document.line, column: document.column, message: "the field \"entries\" is missing; add \"entries\": []")
        }
        guard case .array(let elements) = list.kind else {
            throw BaselineError(line: list.line, column: list.column, message: "\"entries\" must be an array, not \(list.kindName)")
        }
        guard elements.count <= maxEntries else {
            throw BaselineError(
                line: list.line, column: list.column,
                message: "\"entries\" has \(elements.count) entries, more than a baseline may have (\(maxEntries)); "
                    + "accept families of leaks with path patterns (\"**/FeedItemFlow\") instead of one entry each")
        }
        var entries: [Entry] = []
        for (offset, element) in elements.enumerated() {
            entries.append(try entry(element, number: offset + 1))
        }
        return Baseline(entries: entries)
    }

    private static func entry(_ value: BaselineJSONValue, number: Int) throws(BaselineError) -> Entry {
        let name = "entries[\(number - 1)]"
        guard case .object(let members) = value.kind else {
            throw BaselineError(line: value.line, column: value.column, message: "\(name) must be an object, not \(value.kindName)")
        }
        var fingerprint: String?
        var path: BaselinePathPattern?
        var reason: String?
        for member in members {
            guard case .string(let text) = member.value.kind else {
                throw BaselineError(
                    line: member.value.line, column: member.value.column,
                    message: "\(name).\(member.key) must be a string, not \(member.value.kindName)")
            }
            let at = (line: member.value.line, column: member.value.column)
            switch member.key {
            case "fingerprint":
                let lowered = text.lowercased()
                guard lowered.utf8.count == 16, lowered.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) else {
                    throw BaselineError(
                        line: at.line, column: at.column,
                        message: "\(name).fingerprint \"\(text)\" is not a leak fingerprint (16 hexadecimal digits, as reports show)")
                }
                fingerprint = lowered
            case "path":
                guard let pattern = BaselinePathPattern(text) else {
                    throw BaselineError(
                        line: at.line, column: at.column,
                        message:
                            "\(name).path \"\(text)\" is not a path pattern: node names joined by '/', none empty (e.g. AppFlow/*/ProfileFlow or **/LegacyFlow)"
                    )
                }
                path = pattern
            case "reason":
                guard !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else {
                    throw BaselineError(line: at.line, column: at.column, message: "\(name).reason is empty; say why this leak is accepted")
                }
                reason = text
            default:
                throw BaselineError(
                    line: member.line, column: member.column,
                    message: "unknown field \"\(member.key)\" in \(name); an entry has \"fingerprint\" and/or \"path\", and \"reason\"")
            }
        }
        guard fingerprint != nil || path != nil else {
            throw BaselineError(
                line: value.line, column: value.column,
                message: "\(name) has neither \"fingerprint\" nor \"path\": name the leak it accepts")
        }
        guard let reason else {
            throw BaselineError(line: value.line, column: value.column, message: "\(name) has no \"reason\": say why this leak is accepted")
        }
        return Entry(fingerprint: fingerprint, path: path, reason: reason, line: value.line, number: number)
    }

    // MARK: Writing

    /// A baseline document with one entry per fingerprint: its path and a reason (the given
    /// one, such as the reason of the entry that covered it before, or the placeholder).
    package static func document(for leaks: [(fingerprint: String, path: [String], reason: String?)]) -> String {
        let entries = leaks.map { leak in
            ReportJSONValue.object([
                ("fingerprint", .string(leak.fingerprint)),
                ("path", .string(leak.path.joined(separator: "/"))),
                ("reason", .string(leak.reason ?? placeholderReason)),
            ])
        }
        return ReportJSONValue.object([("version", .int(1)), ("entries", .array(entries))]).rendered()
    }
}
