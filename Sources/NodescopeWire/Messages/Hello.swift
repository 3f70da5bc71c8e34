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

extension Hello {
    /// How many bytes at the start of a connection hold a hello's magic and version: the frame
    /// header (5), the magic (4) and the version (2).
    public static let versionPrefixBytes = WireLimits.frameHeaderBytes + 6

    /// The protocol version that a connection's first bytes announce, read at its fixed offset
    /// (the same in every version), or nil when they are not the start of a hello.
    ///
    /// A collector uses it to answer a hello it cannot decode (another version, another layout)
    /// with a refusal that names the versions it speaks.
    public static func announcedVersion(inStreamStart bytes: [UInt8]) -> UInt16? {
        guard bytes.count >= versionPrefixBytes, bytes[4] == FrameType.hello.rawValue,
            Array(bytes[5..<9]) == WireLimits.magic
        else { return nil }
        return UInt16(bytes[9]) | UInt16(bytes[10]) << 8
    }
}
