/// Whether a host's `CLOCK_MONOTONIC` is the collector's own clock.
///
/// On one Linux machine every process reads the same monotonic clock, unless it runs in another
/// time namespace. The server finds out (by comparing the namespaces of the two processes) and
/// tells ``Collector/openSession(_:now:clocks:)``, which then maps host times to its clock.
public enum ClockRelation: Sendable, Equatable {
    /// The same clock: host times are used as they are.
    case same
    /// Different clocks (another time namespace): host times are shifted by the difference
    /// between the hello's clock and the collector's when the hello was read.
    case different
    /// Not known: host times are used as they are, unless the hello's clock is ahead of the
    /// collector's, which one clock cannot be; then they are shifted as for ``different``.
    case unknown
}

/// Maps a host's monotonic times to the collector's, saturating instead of trapping: what
/// ``Collector/openSession(_:now:clocks:processStartedAt:)`` does with the times of a session's
/// frames (a replay that reads the frames' own times uses it too).
public struct HostClockMapping: Sendable, Equatable {
    /// How far the host's clock reads ahead of the collector's, and how far behind (one is 0).
    private(set) var ahead: UInt64 = 0
    private(set) var behind: UInt64 = 0

    /// The identity: host times are collector times.
    static let identity = HostClockMapping()

    /// The mapping for a host whose hello carried `helloTime`, read by the collector at `now`.
    public init(helloTime: UInt64, now: UInt64, relation: ClockRelation) {
        let shift: Bool
        switch relation {
        case .same: shift = false
        case .different: shift = true
        case .unknown: shift = helloTime > now
        }
        guard shift else { return }
        if helloTime >= now { ahead = helloTime - now } else { behind = now - helloTime }
    }

    private init() {}

    /// A host time on the collector's clock, clamped to the range of `UInt64`.
    public func collectorTime(_ hostTime: UInt64) -> UInt64 {
        if ahead > 0 { return hostTime >= ahead ? hostTime - ahead : 0 }
        let (sum, overflow) = hostTime.addingReportingOverflow(behind)
        return overflow ? .max : sum
    }

    /// A collector time on the host's clock: the inverse of ``collectorTime(_:)``, clamped.
    public func hostTime(_ collectorTime: UInt64) -> UInt64 {
        if behind > 0 { return collectorTime >= behind ? collectorTime - behind : 0 }
        let (sum, overflow) = collectorTime.addingReportingOverflow(ahead)
        return overflow ? .max : sum
    }
}
