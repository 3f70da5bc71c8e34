/// Interns a string: later frames on the same connection refer to it by ``stringID``.
///
/// Wire layout (type `0x10`): u32 stringID, str value. The id is never 0 (0 means "none").
/// Redefining an id is a session error, which the decoder (stateless about ids) does not check.
public struct DefineStringFrame: Equatable, Sendable {
    /// The id, unique per connection, at least 1.
    public var stringID: UInt32
    /// The string. Encoded truncated to ``WireLimits/maxStringBytes``.
    public var value: String

    /// Creates a string definition.
    public init(stringID: UInt32, value: String) {
        self.stringID = stringID
        self.value = value
    }
}
