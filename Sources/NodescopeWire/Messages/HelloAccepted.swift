/// The collector's answer to an acceptable hello, with the settings the peer must follow.
///
/// Wire layout (type `0x02`): u16 protocolVersion, u64 graceNanos, u8 flags, u64 collectorMonotonicNanos.
/// Flag bit 0 is ``holdExit``; every other bit must be zero in version 1.
public struct HelloAccepted: Equatable, Sendable {
    /// The protocol version the collector will speak on this connection.
    public var protocolVersion: UInt16
    /// How long after a detach a node's objects may stay alive before it counts as leaked.
    public var graceNanos: UInt64
    /// Whether the host must hold a normal exit until its pending graces have run out
    /// (at most one grace), so that every leak verdict is definite.
    public var holdExit: Bool
    /// The collector's `CLOCK_MONOTONIC` when it sent the answer, in nanoseconds.
    public var collectorMonotonicNanos: UInt64

    /// Creates an acceptance; the version defaults to the one this implementation speaks.
    public init(
        protocolVersion: UInt16 = WireLimits.protocolVersion,
        graceNanos: UInt64,
        holdExit: Bool,
        collectorMonotonicNanos: UInt64
    ) {
        self.protocolVersion = protocolVersion
        self.graceNanos = graceNanos
        self.holdExit = holdExit
        self.collectorMonotonicNanos = collectorMonotonicNanos
    }
}
