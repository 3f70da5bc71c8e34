import NodescopeWire

/// What a recording says about itself before its first record: the process, its hello's
/// clocks, and the recorder's clocks when the recording started.
package struct RecordingHeader: Sendable, Equatable {
    /// The protocol version of the recorded connection (1 to 3).
    package var protocolVersion: UInt16
    /// The host's pid.
    package var pid: UInt32
    /// The host's process name.
    package var processName: String
    /// The host's `CLOCK_MONOTONIC` in its hello, ns.
    package var helloMonotonicNanos: UInt64
    /// The host's wall clock in its hello, ns since the Unix epoch.
    package var helloWallNanos: UInt64
    /// The recorder's `CLOCK_MONOTONIC` when the recording started: arrival times count from it.
    package var startMonotonicNanos: UInt64
    /// The recorder's wall clock at the same moment, ns since the Unix epoch.
    package var startWallNanos: UInt64
    /// How the host's clock relates to the recorder's: 0 unknown, 1 same, 2 different.
    package var clockRelation: UInt8
    /// The collector's grace, ns.
    package var graceNanos: UInt64
    /// Whether the collector asked the host to hold its exit for pending graces.
    package var holdExit: Bool
    /// Whether the recording starts in the middle of the session (with a snapshot that the
    /// recorder made from the collector's tree) rather than at the host's hello.
    package var startsMidSession: Bool

    /// Creates a header.
    package init(
        protocolVersion: UInt16, pid: UInt32, processName: String, helloMonotonicNanos: UInt64, helloWallNanos: UInt64,
        startMonotonicNanos: UInt64, startWallNanos: UInt64, clockRelation: UInt8, graceNanos: UInt64, holdExit: Bool,
        startsMidSession: Bool
    ) {
        self.protocolVersion = protocolVersion
        self.pid = pid
        self.processName = processName
        self.helloMonotonicNanos = helloMonotonicNanos
        self.helloWallNanos = helloWallNanos
        self.startMonotonicNanos = startMonotonicNanos
        self.startWallNanos = startWallNanos
        self.clockRelation = clockRelation
        self.graceNanos = graceNanos
        self.holdExit = holdExit
        self.startsMidSession = startsMidSession
    }

    /// The host's hello as the collector received it.
    package var hello: Hello {
        Hello(
            protocolVersion: protocolVersion, role: .host, pid: pid, monotonicNanos: helloMonotonicNanos,
            wallNanos: helloWallNanos, processName: processName)
    }

    /// The header's body bytes (without the magic, version and length before it).
    func encodedBody() -> [UInt8] {
        var out = RecordBytes()
        out.u16(protocolVersion)
        out.u32(pid)
        out.string(processName)
        out.u64(helloMonotonicNanos)
        out.u64(helloWallNanos)
        out.u64(startMonotonicNanos)
        out.u64(startWallNanos)
        out.u8(clockRelation)
        out.u64(graceNanos)
        out.u8((holdExit ? 0b1 : 0) | (startsMidSession ? 0b10 : 0))
        return out.bytes
    }

    /// Reads a header body; every field must be present and the body consumed exactly.
    static func decode(_ body: ArraySlice<UInt8>) throws(RecordingError) -> RecordingHeader {
        var reader = RecordCursor(body)
        let protocolVersion = try reader.u16("protocolVersion")
        let pid = try reader.u32("pid")
        let name = try reader.string("processName")
        let helloMono = try reader.u64("helloMonotonicNanos")
        let helloWall = try reader.u64("helloWallNanos")
        let startMono = try reader.u64("startMonotonicNanos")
        let startWall = try reader.u64("startWallNanos")
        let clocks = try reader.u8("clockRelation")
        let grace = try reader.u64("graceNanos")
        let flags = try reader.u8("flags")
        guard reader.isAtEnd else {
            throw RecordingError(.corrupt, "the header has \(reader.remaining) bytes after its last field")
        }
        guard clocks <= 2, flags & ~0b11 == 0, WireLimits.supportedVersions.contains(protocolVersion) else {
            throw RecordingError(
                .corrupt, "the header holds values outside their range (clocks \(clocks), flags \(flags), version \(protocolVersion))")
        }
        return RecordingHeader(
            protocolVersion: protocolVersion, pid: pid, processName: name, helloMonotonicNanos: helloMono,
            helloWallNanos: helloWall, startMonotonicNanos: startMono, startWallNanos: startWall, clockRelation: clocks,
            graceNanos: grace, holdExit: flags & 0b1 != 0, startsMidSession: flags & 0b10 != 0)
    }
}
