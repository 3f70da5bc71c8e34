/// The stable fingerprint of a leak, for grouping the same leak across runs and for baselines.
///
/// The formula: take the path (display names from the root down to the node) joined by `/`,
/// then `|`, then the roles of the alive objects sorted by their UTF-8 bytes and joined by `,`
/// (a role that appears twice appears twice). Hash the UTF-8 bytes of that text with 64-bit
/// FNV-1a (offset basis `0xcbf29ce484222325`, prime `0x100000001b3`) and write the result as 16
/// lowercase hexadecimal digits. For example a path `AppFlow/LoggedInFlow` with alive roles
/// `worker` and `flow` hashes `AppFlow/LoggedInFlow|flow,worker`.
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
