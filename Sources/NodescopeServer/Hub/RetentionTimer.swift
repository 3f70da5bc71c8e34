/// The hub's one timer as a decision without I/O: armed at the collector's next deadline
/// (``Collector/nextDeadline()``: an ended session to drop after its retention), and moved only
/// when that deadline moves. The hub performs the returned action on its event loop.
///
/// Graces are not timed here: leaks are flagged by the hosts' watermarks as their streams are
/// read (docs/PROTOCOL.md, section 7), never by the collector's clock.
struct RetentionTimer: Equatable {
    /// What to do with the event loop's scheduled task.
    enum Action: Equatable {
        /// Leave the timer as it is.
        case keep
        /// Cancel the armed timer: nothing is due.
        case cancel
        /// Cancel any armed timer and arm one that fires after `delayNanos`.
        case arm(delayNanos: Int64)
    }

    /// The deadline the timer is armed for, on the collector's clock; nil when it is not armed.
    private(set) var deadline: UInt64?

    /// Follows the collector's next deadline, read at `now`.
    mutating func update(nextDeadline: UInt64?, now: UInt64) -> Action {
        guard nextDeadline != deadline else { return .keep }
        deadline = nextDeadline
        guard let nextDeadline else { return .cancel }
        return .arm(delayNanos: nextDeadline > now ? Int64(clamping: nextDeadline - now) : 0)
    }

    /// The armed timer has fired: nothing is armed any more.
    mutating func fired() {
        deadline = nil
    }
}
