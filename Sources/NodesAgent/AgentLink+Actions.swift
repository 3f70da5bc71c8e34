import NodesTracking
import NodescopeWire

/// What the writer thread reports to the link, and what the link asks of it.
extension AgentLink {
    /// What the writer thread is to do next.
    enum Action: Equatable {
        /// Wait until `until` or a wake-up (a stop, an exit; with `wakeOnEvent`, also an event
        /// queued), then ``tick(now:logBacklog:)``. Stop and exit requests are fed before waiting.
        case sleep(until: UInt64, wakeOnEvent: Bool)
        /// Write one line to the host's standard error, then ``tick(now:logBacklog:)``.
        case log(String)
        /// Look at the socket path; report with ``socketExamined(_:now:)``.
        case examineSocket
        /// Connect after ``SocketTrust`` has checked the path; report with
        /// ``connectFinished(_:now:)``.
        case connect
        /// Write the hello, waiting up to `waitMilliseconds`; report with ``helloSent(complete:now:)``.
        case sendHello(waitMilliseconds: Int32)
        /// Read the answer to the hello, waiting up to `waitMilliseconds`; report with
        /// ``answerRead(_:now:)``. Stop and exit requests are fed before waiting.
        case awaitAnswer(waitMilliseconds: Int32)
        /// The collector accepted: let the app's events into the queue, count the connection;
        /// then ``tick(now:logBacklog:)``.
        case announceConnected
        /// Poll the weak references and read the time up to which the tracker's events are
        /// complete, and the oldest detach whose holders are unexplained; report with
        /// ``releasesPolled(horizon:oldestUnexplained:now:)``.
        case pollReleases
        /// Take everything queued; report with ``eventsTaken(dropped:now:)``.
        case takeEvents
        /// Encode a `dropped` marker (when `dropped` > 0) and a snapshot of the tracker; report
        /// with ``snapshotSent(sequence:latestPendingDetach:now:)``.
        case sendSnapshot(dropped: UInt64)
        /// Encode the taken events whose sequence is above `after`; report with
        /// ``eventsSent(through:latestDetach:now:)``.
        case sendEvents(after: UInt64)
        /// Encode a heartbeat vouching for the stream up to this host time; then ``tick(now:logBacklog:)``.
        case sendHeartbeat(UInt64)
        /// Write what is encoded, waiting up to `waitMilliseconds`; once all of it is written,
        /// everything through sequence `through` is on the wire. Report with ``wrote(_:now:)``.
        case write(waitMilliseconds: Int32, through: UInt64)
        /// Read (without waiting) what the collector sent; report with
        /// ``incomingRead(_:queueIsEmpty:now:)``.
        case readIncoming
        /// Poll the weak references and read which detached nodes still await release, the
        /// oldest detach whose holders are unexplained, and the tracker's sequence; report with
        /// ``trackerInspected(sequence:latestPendingDetach:oldestUnexplained:now:)``.
        case inspectTracker
        /// Explain what holds the alive objects of the nodes detached at or before `detachedBy`
        /// and not explained yet (a retainer analysis), and encode one retainers frame per
        /// object; report with ``leaksExplained(oldestUnexplained:now:)``.
        case explainLeaks(detachedBy: UInt64)
        /// At a normal exit, once everything queued is encoded: explain what holds the alive
        /// objects of every node detached at or before `detachedBy` and not explained yet,
        /// whatever its grace (so that the collector can settle the verdicts a retain cycle or
        /// a global decides), within `boundNanos`; report with
        /// ``leaksExplained(oldestUnexplained:now:)``. Those detached at or before
        /// `graceRanOutBy` are leaks whatever the analysis finds (their grace ran out where the
        /// collector can see it): they are explained as a live leak is, the others settled.
        case settleLeaks(detachedBy: UInt64, graceRanOutBy: UInt64, boundNanos: UInt64)
        /// Explain what holds the alive objects of the nodes the collector asked about (a
        /// retainer analysis, whatever their grace), encode one retainers frame per object and
        /// the `explained` frame that ends the answer; report with ``requestAnswered(now:)``.
        case answer(ExplainFrame)
        /// Write what is left and a goodbye, waiting up to `waitMilliseconds`, and close the
        /// connection (forgetting what is queued); then ``tick(now:logBacklog:)``.
        case sayGoodbye(GoodbyeReason, waitMilliseconds: Int32)
        /// Close the connection and forget what is queued, after logging `log`; then ``tick(now:logBacklog:)``.
        case close(log: String?)
        /// The writer's work is over: report the exit done and end the thread.
        case finish
    }

    /// The identity of the socket file, so that a file that failed is retried when it changes.
    struct SocketFile: Equatable {
        /// The file's inode.
        var inode: UInt64
        /// Its modification time, in seconds.
        var modified: Int
    }

    /// How a connect ended.
    enum ConnectOutcome: Equatable {
        /// Connected to a collector of this user.
        case connected
        /// No collector answered (refused, absent, a system error).
        case failed
        /// ``SocketTrust`` refused the path or the peer: the reason, for the log.
        case untrusted(String)
    }

    /// What a read of the collector's answer to the hello found.
    enum Answer: Equatable {
        /// Nothing complete yet.
        case nothing
        /// Accepted, with the collector's grace, whether it asks to hold a normal exit, and the
        /// protocol version of the connection.
        case accepted(graceNanos: UInt64, holdsExit: Bool, version: UInt16)
        /// Refused, with the collector's reason; `versionUnsupported` when it does not speak
        /// the version the hello named.
        case refused(String, versionUnsupported: Bool)
        /// Another frame, a malformed one, or the end of the connection.
        case unusable
    }

    /// How much of a write the socket took.
    enum WriteOutcome: Equatable {
        /// All of it.
        case all
        /// Part of it within the wait; the rest stays for the next round.
        case partly
        /// The connection is gone.
        case failed
    }

    /// What a read on a streaming connection found.
    enum Incoming: Equatable {
        /// Nothing, or frames that ask nothing.
        case fine
        /// The collector asked to explain nodes (version 2), in the order it asked.
        case asked([ExplainFrame])
        /// The collector closed the connection.
        case ended
        /// A frame that does not decode: the reason, for the log.
        case malformed(String)
    }
}
