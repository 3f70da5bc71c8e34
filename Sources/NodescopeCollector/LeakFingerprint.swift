/// The stable fingerprint of a leak, for grouping the same leak across runs and for baselines.
///
/// The formula: take the path (display names from the root down to the node) joined by `/`,
/// then `|`, then the roles of the alive objects sorted by their UTF-8 bytes and joined by `,`
/// (a role that appears twice appears twice). Hash the UTF-8 bytes of that text with 64-bit
/// FNV-1a (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`) and write the result as 16
/// lowercase hexadecimal digits. For example a path `AppFlow/LoggedInFlow` with alive roles
/// `worker` and `flow` hashes `AppFlow/LoggedInFlow|flow,worker`.
///
/// **With retainer paths** (protocol version 2), the text gets a third part, so that two leaks
/// of one node through different holders group apart: `|`, then one key per alive object that
/// has a path with hops, sorted by their UTF-8 bytes and joined by `,`. A key is
/// `role=holder:reference`, from the path's suspect hop (the first hop when none is marked):
/// the reference a developer would cut, by type and field. The verdict is not part of it, nor
/// the root the path starts from: the same leak reads as a path from a still-attached holder
/// while its process runs and as a cycle once that holder is detached (at exit, under
/// `check`), and its fingerprint must not change with that. Two parts of the names that vary from run to run taken out: the content of
/// every `[…]` (`.listeners[3]` and `.listeners[12]` both read `.listeners[]`,
/// `.shared["session"]` reads `.shared[]`) and the digits of every `0x…` number. For example a
/// context held through `Session.listeners[3]` hashes
/// `AppFlow/ProfileFlow|context|context=Session:.listeners[]`.
///
/// A leak without such a path (a host of version 1, a path not arrived yet, the verdicts
/// `unknown` and `notAnalyzed`, which have no hops) has exactly the fingerprint of the formula
/// without the third part, so baselines written before retainer paths existed keep matching it.
///
/// It depends on nothing else: no node ids, process ids, times or sessions.
public enum LeakFingerprint {
    /// The text that is hashed: `path/joined|sorted,roles`.
    public static func canonicalText(path: [String], aliveRoles: [String]) -> String {
        let roles = aliveRoles.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return path.joined(separator: "/") + "|" + roles.joined(separator: ",")
    }

    /// The fingerprint: FNV-1a 64 of ``canonicalText(path:aliveRoles:)`` as 16 lowercase hex digits.
    public static func fingerprint(path: [String], aliveRoles: [String]) -> String {
        hex(fnv1a64(canonicalText(path: path, aliveRoles: aliveRoles).utf8))
    }

    /// The text that is hashed for a leak whose host may have sent retainer paths: the text of
    /// ``canonicalText(path:aliveRoles:)``, then `|` and the sorted keys of the alive objects'
    /// paths (``retainerKey(role:path:)``) joined by `,`, when there is at least one key.
    public static func canonicalText(path: [String], aliveObjects: [ObjectInfo], retainers: [RetainerPath]) -> String {
        let base = canonicalText(path: path, aliveRoles: aliveObjects.map(\.role))
        guard !retainers.isEmpty else { return base }
        var keys: [String] = []
        for object in aliveObjects {
            guard let retainer = retainers.first(where: { $0.objectIndex == object.index }),
                let key = retainerKey(role: object.role, path: retainer)
            else { continue }
            keys.append(key)
        }
        guard !keys.isEmpty else { return base }
        keys.sort { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return base + "|" + keys.joined(separator: ",")
    }

    /// The fingerprint of a leak with the retainer paths its host sent (none: the same as
    /// ``fingerprint(path:aliveRoles:)``).
    public static func fingerprint(path: [String], aliveObjects: [ObjectInfo], retainers: [RetainerPath]) -> String {
        hex(fnv1a64(canonicalText(path: path, aliveObjects: aliveObjects, retainers: retainers).utf8))
    }

    /// `role=holder:reference` of the path's suspect hop (else its first hop), with the parts
    /// that vary between runs taken out (``stableName(_:)``); nil for a path without hops.
    public static func retainerKey(role: String, path: RetainerPath) -> String? {
        guard let hop = path.keyHop else { return nil }
        return "\(role)=\(stableName(hop.holder)):\(stableName(hop.reference))"
    }

    /// A holder or reference without what varies from run to run: the content of every `[…]`
    /// (element indices, dictionary keys) and the digits of every `0x…` number (addresses).
    public static func stableName(_ name: String) -> String {
        var result = ""
        result.reserveCapacity(name.utf8.count)
        var depth = 0
        var previous: Character?
        var inHexNumber = false
        for character in name {
            if inHexNumber, character.isHexDigit {
                previous = character
                continue
            }
            inHexNumber = false
            switch character {
            case "[":
                if depth == 0 { result.append(character) }
                depth += 1
            case "]" where depth > 0:
                depth -= 1
                if depth == 0 { result.append(character) }
            default:
                guard depth == 0 else { break }
                result.append(character)
                if character == "x" || character == "X", previous == "0" { inHexNumber = true }
            }
            previous = character
        }
        // An unclosed `[` drops the rest of the name, as a closed one drops its content.
        return result
    }

    /// 64-bit FNV-1a of a byte sequence.
    public static func fnv1a64<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    /// `value` as exactly 16 lowercase hexadecimal digits.
    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16, uppercase: false)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
