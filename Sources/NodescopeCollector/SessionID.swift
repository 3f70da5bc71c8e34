/// Identifies one host connection in a ``Collector``: ids are handed out 1, 2, 3 … by
/// ``Collector/openSession(_:now:)`` and never reused by that collector.
///
/// A host that reconnects gets a new session. Encoded (Codable) as a plain number.
public struct SessionID: Hashable, Comparable, Sendable, Codable, CustomStringConvertible {
    /// The number of the session.
    public let rawValue: UInt64

    /// Wraps a session number.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Orders sessions by when they were opened.
    public static func < (lhs: SessionID, rhs: SessionID) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// The session number in decimal.
    public var description: String { String(rawValue) }

    /// Decodes a session from a plain number.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    /// Encodes the session as a plain number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}
