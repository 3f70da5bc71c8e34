/// The collector's answer to a hello that it will not serve; the connection closes after it.
///
/// Wire layout (type `0x03`): u8 code, str reason.
public struct HelloRefused: Equatable, Sendable {
    /// Why the hello was refused.
    public var code: RefusalCode
    /// A sentence for the peer's log. Encoded truncated to ``WireLimits/maxStringBytes``.
    public var reason: String

    /// Creates a refusal.
    public init(code: RefusalCode, reason: String) {
        self.code = code
        self.reason = reason
    }
}
