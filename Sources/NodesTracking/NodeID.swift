import Synchronization

/// The identity of one node attachment in a process.
///
/// Ids are handed out from one process-wide counter and are never reused, unlike an
/// `ObjectIdentifier`, which is recycled as soon as an object is deallocated. Zero is never a
/// valid id; on the wire it means "no parent".
public struct NodeID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The 64-bit value sent on the wire.
    public let rawValue: UInt64

    /// Wraps a raw id, for example one decoded from the wire.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// A fresh id, never handed out before in this process.
    public static func next() -> NodeID {
        NodeID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).newValue)
    }

    /// Ids order by allocation, so a parent always sorts before the children attached to it.
    public static func < (lhs: NodeID, rhs: NodeID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The id in the form `#42`.
    public var description: String { "#\(rawValue)" }

    private static let counter = Atomic<UInt64>(0)
}
