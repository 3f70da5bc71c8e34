import Foundation
import NodescopeCollector

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Rewrites the closures of a tree's JSON (``TreeJSON``) as the document streams past, part by
/// part, so that a tree passed on without being decoded (a collector's answer to `tree`) can name
/// the closures on its retainer paths as a decoded tree does.
///
/// Only the `"closure":{…}` objects are read (with `JSONDecoder`; they are small and few, on the
/// retainer paths of detached nodes); every other byte is passed on as it came, the key found from
/// the `{` that ends it (`memchr`). The closures of one part are handed to the naming together, so one naming serves the
/// part. An object that does not read as a closure, or runs past ``maxObjectBytes``, is passed
/// on untouched, as is one that the stream ends inside: the rewriter never makes a document
/// invalid that was valid, nor fails on one that was not.
package struct TreeJSONClosures {
    /// The longest closure object read; a longer one is passed on as it is. (A closure's image
    /// path and symbol, escaped, stay far below.)
    package static let maxObjectBytes = 1 << 16

    private static let key = Array("\"closure\":{".utf8)

    /// The end of the last part that may begin the key, held until the next part shows.
    private var held: [UInt8] = []
    /// The closure object under way, from its `{`; empty outside one.
    private var object: [UInt8] = []
    private var inString = false
    private var escaped = false
    private var depth = 0

    package init() {}

    /// The document's next part, rewritten: what can be passed on now. `naming` gets the closures
    /// that this part completes, in order, and returns them named (or as they were).
    package mutating func rewrite(
        _ part: [UInt8], naming: ([RetainerPath.Closure]) -> [RetainerPath.Closure]
    ) -> [UInt8] {
        var pieces: [Piece] = []
        var plain: [UInt8] = []
        var closures: [RetainerPath.Closure] = []
        // The bytes held from the last part, if any, go first (never more than the key's length;
        // none while an object is under way).
        let bytes = held.isEmpty ? part : held + part
        held = []
        var index = 0
        if !object.isEmpty { index = continueObject(bytes, from: 0, plain: &plain, pieces: &pieces, closures: &closures) }
        while index < bytes.count {
            // Outside an object: find the next key.
            guard let found = Self.find(Self.key, in: bytes, from: index) else {
                let keep = Self.heldSuffix(of: bytes, from: index)
                plain += bytes[index..<(bytes.count - keep)]
                held = Array(bytes[(bytes.count - keep)...])
                break
            }
            // Everything up to the key's `{`, which begins the object.
            let brace = found + Self.key.count - 1
            plain += bytes[index..<brace]
            object = [UInt8(ascii: "{")]
            (inString, escaped, depth) = (false, false, 1)
            index = continueObject(bytes, from: brace + 1, plain: &plain, pieces: &pieces, closures: &closures)
        }
        guard !closures.isEmpty else { return plain }
        pieces.append(.bytes(plain))
        let named = naming(closures)
        var output: [UInt8] = []
        output.reserveCapacity(part.count + 256)
        var next = 0
        for piece in pieces {
            switch piece {
            case .bytes(let bytes): output += bytes
            case .closure(let original, let closure):
                let renamed = next < named.count ? named[next] : closure
                next += 1
                output += renamed == closure ? original : TreeJSON.closureObject(renamed)
            }
        }
        return output
    }

    /// What the stream's end leaves: the bytes held, and an object the document never closed.
    package mutating func finish() -> [UInt8] {
        let rest = held + object
        held = []
        object = []
        return rest
    }

    private enum Piece {
        case bytes([UInt8])
        case closure(original: [UInt8], RetainerPath.Closure)
    }

    /// Reads the object under way from `part[start...]` to its closing brace (or the part's end);
    /// returns the index after what it read.
    private mutating func continueObject(
        _ part: [UInt8], from start: Int, plain: inout [UInt8], pieces: inout [Piece],
        closures: inout [RetainerPath.Closure]
    ) -> Int {
        var index = start
        while index < part.count, !object.isEmpty {
            let byte = part[index]
            index += 1
            object.append(byte)
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
            } else if byte == UInt8(ascii: "\"") {
                inString = true
            } else if byte == UInt8(ascii: "{") {
                depth += 1
            } else if byte == UInt8(ascii: "}") {
                depth -= 1
                if depth == 0 {
                    if let closure = try? JSONDecoder().decode(RetainerPath.Closure.self, from: Data(object)) {
                        pieces.append(.bytes(plain))
                        plain = []
                        pieces.append(.closure(original: object, closure))
                        closures.append(closure)
                    } else {
                        plain += object
                    }
                    object = []
                }
            }
            if object.count > Self.maxObjectBytes {
                plain += object
                object = []
            }
        }
        return index
    }

    /// Where the key first begins in `bytes` at or after `start`: each `{` (`memchr`, which the
    /// C library makes fast; a tree has a few a node) is checked for the key's other bytes before it.
    private static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        let before = needle.count - 1
        guard before >= 0, start >= 0, bytes.count - start >= needle.count else { return nil }
        return bytes.withUnsafeBytes { buffer -> Int? in
            guard let base = buffer.baseAddress else { return nil }
            var from = start + before
            while from < buffer.count {
                guard let hit = memchr(base + from, Int32(needle[before]), buffer.count - from) else { return nil }
                let brace = base.distance(to: UnsafeRawPointer(hit))
                if memcmp(base + (brace - before), needle, before) == 0 { return brace - before }
                from = brace + 1
            }
            return nil
        }
    }

    /// How many bytes at the end of `bytes[start...]` begin the key (and so may be the start of one
    /// that the next part ends).
    private static func heldSuffix(of bytes: [UInt8], from start: Int) -> Int {
        for length in stride(from: min(key.count - 1, bytes.count - start), to: 0, by: -1)
        where bytes[(bytes.count - length)...].elementsEqual(key[..<length]) {
            return length
        }
        return 0
    }
}
