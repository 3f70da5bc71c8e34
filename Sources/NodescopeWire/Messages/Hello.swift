/// The first frame on every connection: who the peer is and what its clocks read.
///
/// Wire layout (type `0x01`): magic `NSCP`, u16 protocolVersion, u8 role, u32 pid,
/// u64 monotonicNanos, u64 wallNanos, str processName.
public struct Hello: Equatable, Sendable {
    /// The protocol version the sender speaks. A version 1 decoder rejects any other value.
    public var protocolVersion: UInt16
    /// Whether the sender is a host or a client.
    public var role: PeerRole
    /// The sender's process id.
    public var pid: UInt32
    /// The sender's `CLOCK_MONOTONIC` when it sent the hello, in nanoseconds.
    public var monotonicNanos: UInt64
    /// The sender's wall clock (Unix epoch) when it sent the hello, in nanoseconds.
    public var wallNanos: UInt64
    /// The sender's process name. Encoded truncated to ``WireLimits/maxStringBytes``.
    public var processName: String

    /// Creates a hello; the version defaults to the one this implementation speaks.
    public init(
        protocolVersion: UInt16 = WireLimits.protocolVersion,
        role: PeerRole,
        pid: UInt32,
        monotonicNanos: UInt64,
        wallNanos: UInt64,
        processName: String
    ) {
        self.protocolVersion = protocolVersion
        self.role = role
        self.pid = pid
        self.monotonicNanos = monotonicNanos
        self.wallNanos = wallNanos
        self.processName = processName
    }
}
