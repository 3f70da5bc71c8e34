/// A change pushed by the collector to a client that subscribed.
///
/// Wire layout (type `0x42`): u32 subscriptionID, bytes body (u32 length, then the bytes;
/// at most ``WireLimits/maxBodyBytes``). The body is opaque to the wire layer.
public struct ControlEventFrame: Equatable, Sendable {
    /// The subscription this event belongs to (the request id of the subscribe request).
    public var subscriptionID: UInt32
    /// The event's bytes; the encoder truncates a body longer than ``WireLimits/maxBodyBytes``.
    public var body: [UInt8]

    /// Creates a subscription event.
    public init(subscriptionID: UInt32, body: [UInt8]) {
        self.subscriptionID = subscriptionID
        self.body = body
    }
}
