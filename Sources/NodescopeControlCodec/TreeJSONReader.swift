import Foundation
import NodescopeCollector

/// Reads the JSON of a ``TreeView`` by hand: the document that ``TreeJSON`` writes, or any JSON
/// of the same view (keys in any order, any white space, unknown keys skipped), into the view
/// that `JSONDecoder` would make, about ten times faster and without its intermediate values.
/// A 1,000,000-node tree is some 200 MB of JSON, which `JSONDecoder` takes seconds and gigabytes
/// to read; `tree` and `export` read the collector's answer with this instead.
///
/// The common fields are read here; the rare nested values (a node's retainer paths and test,
/// the view's counts) are handed to `JSONDecoder` whole. Nothing recurses on the document's
/// nesting: a hostile document of any depth is read or refused with a bounded stack.
package enum TreeJSONReader {
    /// Why a document is not a tree: what was expected, and where.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// What was wrong.
        package var message: String
        /// The byte offset in the document where it was noticed.
        package var offset: Int

        /// `MESSAGE at byte OFFSET`.
        package var description: String { "\(message) at byte \(offset)" }
    }

    /// Reads `bytes` as a tree.
    ///
    /// - Throws: ``Failure`` when the bytes are not a tree's JSON.
    package static func decode(_ bytes: [UInt8]) throws(Failure) -> TreeView {
        try bytes.withUnsafeBufferPointer { (buffer) throws(Failure) -> TreeView in
            var cursor = Cursor(bytes: buffer)
            let view = try cursor.view()
            cursor.skipSpace()
            guard cursor.position == buffer.count else { throw cursor.failure("text after the tree") }
            return view
        }
    }
}

/// A position in a JSON document, and the readers of its values.
private struct Cursor {
    let bytes: UnsafeBufferPointer<UInt8>
    var position = 0

    init(bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    func failure(_ message: String) -> TreeJSONReader.Failure {
        TreeJSONReader.Failure(message: message, offset: position)
    }

    // MARK: The tree's values

    mutating func view() throws(TreeJSONReader.Failure) -> TreeView {
        var session: UInt64?
        var pid: UInt32?
        var processName: String?
        var nodes: [NodeInfo]?
        var truncated: [UInt64: Int]?
        var counts: NodeCounts?
        var wallNanos: UInt64?
        try object { (cursor, key) throws(TreeJSONReader.Failure) in
            switch key {
            case "session": session = try cursor.unsigned()
            case "pid": pid = try cursor.unsigned(max: UInt64(UInt32.max)).map(UInt32.init)
            case "processName": processName = try cursor.string()
            case "nodes":
                var list: [NodeInfo] = []
                try cursor.array { (cursor) throws(TreeJSONReader.Failure) in list.append(try cursor.node()) }
                nodes = list
            case "truncatedChildren":
                var cut: [UInt64: Int] = [:]
                try cursor.object { (cursor, key) throws(TreeJSONReader.Failure) in
                    guard let id = UInt64(key) else { throw cursor.failure("truncatedChildren key \(key) is not a node id") }
                    cut[id] = try cursor.required(cursor.signed(), "a count")
                }
                truncated = cut
            case "counts": counts = try cursor.decodedWhole(NodeCounts.self)
            case "wallNanos": wallNanos = try cursor.unsigned()
            default: try cursor.skipValue()
            }
        }
        guard let session, let pid, let processName, let nodes, let truncated else {
            throw failure("a tree has session, pid, processName, nodes and truncatedChildren")
        }
        return TreeView(
            session: SessionID(rawValue: session), pid: pid, processName: processName, nodes: nodes, truncatedChildren: truncated,
            counts: counts, wallNanos: wallNanos)
    }

    mutating func node() throws(TreeJSONReader.Failure) -> NodeInfo {
        var id: UInt64?
        var parent: UInt64?
        var kind: String?
        var name: String?
        var status: NodeStatus?
        var objects: [ObjectInfo]?
        var attachedAt: UInt64?
        var detachedAt: UInt64?
        var depth: Int?
        var isPlaceholder: Bool?
        var retainers: [RetainerPath]?
        var attachSite: SourceSite?
        var test: TestInfo?
        try object { (cursor, key) throws(TreeJSONReader.Failure) in
            switch key {
            case "id": id = try cursor.unsigned()
            case "parent": parent = try cursor.unsigned()
            case "kind": kind = try cursor.string()
            case "name": name = try cursor.string()
            case "status":
                let text = try cursor.required(cursor.string(), "a status")
                guard let value = NodeStatus(rawValue: text) else { throw cursor.failure("no node status is called \(text)") }
                status = value
            case "objects":
                var list: [ObjectInfo] = []
                try cursor.array { (cursor) throws(TreeJSONReader.Failure) in list.append(try cursor.objectInfo()) }
                objects = list
            case "attachedAtNanos": attachedAt = try cursor.unsigned()
            case "detachedAtNanos": detachedAt = try cursor.unsigned()
            case "depth": depth = try cursor.signed()
            case "isPlaceholder": isPlaceholder = try cursor.bool()
            case "retainers": retainers = try cursor.decodedWhole([RetainerPath].self)
            case "attachSite": attachSite = try cursor.sourceSite()
            case "test": test = try cursor.decodedWhole(TestInfo.self)
            default: try cursor.skipValue()
            }
        }
        guard let id, let kind, let name, let status, let objects, let attachedAt, let depth, let isPlaceholder else {
            throw failure("a node has id, kind, name, status, objects, attachedAtNanos, depth and isPlaceholder")
        }
        return NodeInfo(
            id: id, parent: parent, kind: kind, name: name, status: status, objects: objects, attachedAtNanos: attachedAt,
            detachedAtNanos: detachedAt, depth: depth, isPlaceholder: isPlaceholder, retainers: retainers, attachSite: attachSite,
            test: test)
    }

    mutating func objectInfo() throws(TreeJSONReader.Failure) -> ObjectInfo {
        var index: UInt16?
        var role: String?
        var typeName: String?
        var isAlive: Bool?
        try object { (cursor, key) throws(TreeJSONReader.Failure) in
            switch key {
            case "index": index = try cursor.unsigned(max: UInt64(UInt16.max)).map(UInt16.init)
            case "role": role = try cursor.string()
            case "typeName": typeName = try cursor.string()
            case "isAlive": isAlive = try cursor.bool()
            default: try cursor.skipValue()
            }
        }
        guard let index, let role, let typeName, let isAlive else { throw failure("an object has index, role, typeName and isAlive") }
        return ObjectInfo(index: index, role: role, typeName: typeName, isAlive: isAlive)
    }

    /// `{"file": …, "line": …}`; nil for `null`.
    mutating func sourceSite() throws(TreeJSONReader.Failure) -> SourceSite? {
        if isNull() { return nil }
        var file: String?
        var line: UInt32?
        try object { (cursor, key) throws(TreeJSONReader.Failure) in
            switch key {
            case "file": file = try cursor.string()
            case "line": line = try cursor.unsigned(max: UInt64(UInt32.max)).map(UInt32.init)
            default: try cursor.skipValue()
            }
        }
        guard let file, let line else { throw failure("a source site has file and line") }
        return SourceSite(file: file, line: line)
    }

    /// A value read by `JSONDecoder` from its own bytes (nil for `null`).
    mutating func decodedWhole<T: Decodable>(_ type: T.Type) throws(TreeJSONReader.Failure) -> T? {
        if isNull() { return nil }
        let start = position
        try skipValue()
        do {
            return try JSONDecoder().decode(type, from: Data(bytes[start..<position]))
        } catch {
            position = start
            throw failure("not a \(type): \(error)")
        }
    }

    // MARK: JSON

    mutating func skipSpace() {
        while position < bytes.count {
            switch bytes[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return
            }
        }
    }

    mutating func expect(_ byte: UInt8, _ what: String) throws(TreeJSONReader.Failure) {
        skipSpace()
        guard position < bytes.count, bytes[position] == byte else { throw failure("expected \(what)") }
        position += 1
    }

    /// Whether the next value is `null`, which it then reads.
    mutating func isNull() -> Bool {
        skipSpace()
        guard position + 4 <= bytes.count, bytes[position] == UInt8(ascii: "n") else { return false }
        guard bytes[position + 1] == UInt8(ascii: "u"), bytes[position + 2] == UInt8(ascii: "l"), bytes[position + 3] == UInt8(ascii: "l")
        else { return false }
        position += 4
        return true
    }

    func required<T>(_ value: T?, _ what: String) throws(TreeJSONReader.Failure) -> T {
        guard let value else { throw failure("expected \(what), not null") }
        return value
    }

    /// Calls `member` for each key of an object, the cursor at the key's value.
    mutating func object(_ member: (inout Cursor, String) throws(TreeJSONReader.Failure) -> Void) throws(TreeJSONReader.Failure) {
        try expect(UInt8(ascii: "{"), "an object")
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            guard let key = try string() else { throw failure("expected a key") }
            try expect(UInt8(ascii: ":"), "':'")
            try member(&self, key)
            skipSpace()
            guard position < bytes.count else { throw failure("an object that does not end") }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "}") { return }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or '}'") }
        }
    }

    /// Calls `element` for each element of an array, the cursor at the element.
    mutating func array(_ element: (inout Cursor) throws(TreeJSONReader.Failure) -> Void) throws(TreeJSONReader.Failure) {
        try expect(UInt8(ascii: "["), "an array")
        skipSpace()
        if position < bytes.count, bytes[position] == UInt8(ascii: "]") {
            position += 1
            return
        }
        while true {
            try element(&self)
            skipSpace()
            guard position < bytes.count else { throw failure("an array that does not end") }
            let byte = bytes[position]
            position += 1
            if byte == UInt8(ascii: "]") { return }
            guard byte == UInt8(ascii: ",") else { throw failure("expected ',' or ']'") }
        }
    }

    /// A string; nil for `null`.
    mutating func string() throws(TreeJSONReader.Failure) -> String? {
        if isNull() { return nil }
        try expect(UInt8(ascii: "\""), "a string")
        let start = position
        // Most strings have no escape: one scan, one copy.
        while position < bytes.count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
                position += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("a control character in a string") }
            position += 1
        }
        var utf8 = Array(bytes[start..<position])
        while position < bytes.count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard position < bytes.count else { break }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escape)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hexQuad()
                    if (0xD800..<0xDC00).contains(scalar), position + 6 <= bytes.count, bytes[position] == UInt8(ascii: "\\"),
                        bytes[position + 1] == UInt8(ascii: "u")
                    {
                        position += 2
                        let low = try hexQuad()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate in a string") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let value = Unicode.Scalar(scalar) else { throw failure("a lone surrogate in a string") }
                    utf8.append(contentsOf: Array(String(Character(value)).utf8))
                default:
                    throw failure("an unknown escape in a string")
                }
            default:
                if byte < 0x20 { throw failure("a control character in a string") }
                utf8.append(byte)
            }
        }
        throw failure("a string that does not end")
    }

    private mutating func hexQuad() throws(TreeJSONReader.Failure) -> UInt32 {
        guard position + 4 <= bytes.count else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    /// A whole number of at most `max`; nil for `null`.
    mutating func unsigned(max: UInt64 = .max) throws(TreeJSONReader.Failure) -> UInt64? {
        if isNull() { return nil }
        let start = position
        var value: UInt64 = 0
        while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, carry) = times.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
            guard !overflow, !carry else { throw failure("a number too large") }
            value = sum
            position += 1
        }
        guard position > start else { throw failure("expected a whole number") }
        try noFraction()
        guard value <= max else { throw failure("a number too large") }
        return value
    }

    /// A whole number that may be negative; nil for `null`.
    mutating func signed() throws(TreeJSONReader.Failure) -> Int? {
        if isNull() { return nil }
        let negative = position < bytes.count && bytes[position] == UInt8(ascii: "-")
        if negative { position += 1 }
        guard let magnitude = try unsigned(max: UInt64(Int.max)) else { throw failure("expected a whole number") }
        return negative ? -Int(magnitude) : Int(magnitude)
    }

    private func noFraction() throws(TreeJSONReader.Failure) {
        guard position < bytes.count else { return }
        switch bytes[position] {
        case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): throw failure("expected a whole number")
        default: return
        }
    }

    /// `true` or `false`; nil for `null`.
    mutating func bool() throws(TreeJSONReader.Failure) -> Bool? {
        if isNull() { return nil }
        if matches("true") { return true }
        if matches("false") { return false }
        throw failure("expected true or false")
    }

    private mutating func matches(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard position + count <= bytes.count else { return false }
        for index in 0..<count where bytes[position + index] != word.utf8Start[index] { return false }
        position += count
        return true
    }

    /// Skips one value of any kind, nested as deep as it is, without recursion.
    mutating func skipValue() throws(TreeJSONReader.Failure) {
        var depth = 0
        repeat {
            skipSpace()
            guard position < bytes.count else { throw failure("a value that does not end") }
            let byte = bytes[position]
            switch byte {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                position += 1
                continue
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw failure("an unexpected '\(Character(Unicode.Scalar(byte)))'") }
                depth -= 1
                position += 1
            case UInt8(ascii: "\""):
                _ = try string()
                skipSpace()
                // A key: its value follows.
                if depth > 0, position < bytes.count, bytes[position] == UInt8(ascii: ":") {
                    position += 1
                    continue
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                position += 1
                while position < bytes.count,
                    (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position])
                        || [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-")]
                            .contains(bytes[position])
                {
                    position += 1
                }
            default:
                guard matches("true") || matches("false") || matches("null") else { throw failure("expected a value") }
            }
            skipSpace()
            // After a value inside a container: a comma goes on to the next one.
            if depth > 0, position < bytes.count, bytes[position] == UInt8(ascii: ",") { position += 1 }
        } while depth > 0
    }
}
