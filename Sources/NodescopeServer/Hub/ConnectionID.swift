/// One connection to the collector, as the hub and its subscription table name it: a number
/// given when the connection opens and never reused while the server runs (unlike a channel's
/// `ObjectIdentifier`, which a later channel may get once the first is freed).
struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The number, from 1 in the order connections opened.
    let rawValue: UInt64

    static func < (lhs: ConnectionID, rhs: ConnectionID) -> Bool { lhs.rawValue < rhs.rawValue }

    var description: String { "connection \(rawValue)" }
}
