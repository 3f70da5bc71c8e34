/// The host's watermark (docs/PROTOCOL.md, heartbeat): the latest time, on the collector's
/// clock, up to which the host's stream is known to be complete, and what vouches for it.
///
/// Graces are judged against it, never against the collector's own clock, so a verdict does
/// not depend on how far behind the collector is. When it moves is decided by
/// ``VerdictRules``.
struct HostWatermark: Equatable {
    /// The time vouched for; nil until the host has vouched for any.
    private(set) var time: UInt64?
    /// Whether the host has sent a heartbeat: from then on only heartbeats move the watermark
    /// (a host that notices some releases by polling vouches for its stream through them).
    private(set) var heartbeatsSeen = false

    /// Moves the watermark to `time` if that is later.
    mutating func advance(to time: UInt64) {
        if self.time.map({ time > $0 }) ?? true { self.time = time }
    }

    /// Notes that the host sends heartbeats.
    mutating func noteHeartbeat() {
        heartbeatsSeen = true
    }
}
