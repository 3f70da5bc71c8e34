import NodesRetainers
import NodesTracking
internal import NodescopeSocket
import NodescopeWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent's writer thread: it performs what ``AgentLink`` decides (system calls, the
/// tracker's snapshots and polls, encoding) and feeds the outcomes back, with the time; how it
/// waits between rounds is ``WriterPause``'s decision. It takes no decision of its own.
///
/// It is the only thread that touches the connection and the consumer side of the queue.
struct AgentWriter {
    private let settings: AgentSettings
    private let tracker: NodeTracker
    private let feed: AgentFeed
    private let control: WriterControl
    private var link: AgentLink
    private var connection: CollectorConnection?
    /// The events of the current round, taken from the queue.
    private var batch: [DebugInformation] = []
    /// What the current round encoded as the changes were applied: through which sequence, the
    /// latest detach, how many events.
    private var straightlyEncoded: (through: UInt64, latestDetach: UInt64?, count: UInt64)?
    /// The events that the feed's queue dropped as this round's poll took them: counted with
    /// the take that follows it.
    private var droppedByPoll: UInt64 = 0
    private var stopFed = false
    private var exitFed = false
    /// The retainer analysis, with the process's budget.
    private let analysis: RetainerAnalysis
    /// The paths found so far, sent again after the snapshot of a new connection.
    private var explained = ExplainedPaths()
    /// Whether this connection got the paths found before it (after its first snapshot).
    private var pathsResent = false

    /// Whether the last round left changes behind for want of time (``AgentLink/roundUnits``).
    private var behind = false

    /// A writer for the agent with `settings`, reading `tracker` and `feed`.
    init(settings: AgentSettings, tracker: NodeTracker, feed: AgentFeed, control: WriterControl) {
        self.settings = settings
        self.tracker = tracker
        self.feed = feed
        self.control = control
        self.link = AgentLink(settings: settings)
        self.analysis = RetainerAnalysis(limits: settings.retainerLimits)
    }

    /// While the socket takes nothing (the collector stopped reading) and the log is more than
    /// half full, applies it without making events, counted as dropped (the stream then starts
    /// again from a snapshot), down to a quarter: otherwise the app's threads would find it full
    /// and apply it themselves, at several times the cost of an append.
    private func letGoWhileStalled() {
        guard link.isStalled, tracker.unappliedUnits > tracker.logCapacity / 2 else { return }
        var discarded: UInt64 = 0
        // Bounded, so that an app that records as fast as this goes does not keep the writer here.
        var slices = 2 * tracker.logCapacity / AgentLink.roundUnits
        while tracker.unappliedUnits > tracker.logCapacity / 4, slices > 0 {
            slices -= 1
            let (count, _) = tracker.applyRecordedDiscarding(for: feed, maximum: AgentLink.roundUnits)
            discarded &+= count
            if count == 0 { break }
        }
        guard discarded > 0 else { return }
        feed.queue.countDropped(discarded)
    }

    /// Runs until the link is done (a stop, or an exit flushed).
    mutating func run() {
        var action = tick()
        while action != .finish {
            action = perform(action)
            if let deadline = link.exitDeadline { control.exitDeadline.store(deadline, ordering: .releasing) }
        }
        closeConnection()
        control.exitDone.signal()
    }

    /// Performs one action and returns the link's answer to its outcome.
    private mutating func perform(_ action: AgentLink.Action) -> AgentLink.Action {
        switch action {
        case .sleep(let until, let wakeOnEvent):
            if let request = feedRequest() { return request }
            letGoWhileStalled()
            let pause = WriterPause.choose(
                until: until, wakeOnEvent: wakeOnEvent, now: MonotonicClock.now(), backlog: behind,
                changesWaiting: tracker.hasUnappliedChanges)
            behind = false
            switch pause {
            case .yieldThenRound:
                sched_yield()
            case .timed(let nanoseconds):
                if nanoseconds > 0 { feed.wake.wait(nanoseconds: nanoseconds) }
            case .gather(let nanoseconds):
                var rest = timespec(tv_sec: 0, tv_nsec: Int(nanoseconds))
                nanosleep(&rest, nil)
            case .untilWork(let nanoseconds):
                // The flag goes up before the last look at the log, so a change recorded
                // meanwhile wakes us.
                tracker.consumerIdle.store(true, ordering: .sequentiallyConsistent)
                if !tracker.hasUnappliedChanges, feed.queue.isEmpty, nanoseconds > 0 {
                    feed.wake.wait(nanoseconds: nanoseconds, orReadable: connection?.descriptor)
                }
                tracker.consumerIdle.store(false, ordering: .relaxed)
            }
            return tick()
        case .log(let line):
            StandardError.write("[nodescope] \(line)\n")
        case .examineSocket:
            return link.socketExamined(examineSocket(), now: MonotonicClock.now())
        case .connect:
            return link.connectFinished(connect(), now: MonotonicClock.now())
        case .sendHello(let wait):
            connection?.encode(
                .hello(
                    Hello(
                        protocolVersion: link.helloVersion, role: .host, pid: UInt32(truncatingIfNeeded: getpid()),
                        monotonicNanos: MonotonicClock.now(),
                        wallNanos: MonotonicClock.wallNow(), processName: NodescopeAgent.processName)))
            let complete = connection?.write(waitMilliseconds: wait) == .all
            return link.helloSent(complete: complete, now: MonotonicClock.now())
        case .awaitAnswer(let wait):
            if let request = feedRequest() { return request }
            let answer = connection?.readAnswer(waitMilliseconds: wait) ?? .unusable
            return link.answerRead(answer, now: MonotonicClock.now())
        case .announceConnected:
            control.statistics.withLock { $0.connections &+= 1 }
            feed.connected.store(true, ordering: .releasing)
        case .pollReleases:
            // The poll applies every change recorded before its horizon; they become this
            // round's events as a take makes them (the take comes next), not events queued for it.
            let straight = lendConnection(if: link.pollTakesEventsStraight)
            let polled = tracker.pollReleasesWithHorizon(for: feed, into: &batch, encoding: straight)
            takeBack(straight)
            droppedByPoll &+= polled.dropped
            return link.releasesPolled(
                horizon: polled.horizon, oldestUnexplained: polled.oldestUnexplained, now: MonotonicClock.now())
        case .takeEvents:
            // The changes the app's threads recorded become events here, off their threads.
            // While the stream sends deltas, the events are encoded as the changes are applied.
            // Not straight after the poll saw the queue drop events: the queue has forgotten
            // the drop, and this round's events must wait for the snapshot that the drop calls for.
            let straight = lendConnection(if: link.takesEventsStraight && droppedByPoll == 0)
            var (dropped, backlog) = tracker.applyRecorded(
                for: feed, into: &batch, encoding: straight, maximum: AgentLink.roundUnits)
            behind = backlog
            takeBack(straight)
            dropped &+= droppedByPoll
            droppedByPoll = 0
            if dropped > 0 { control.statistics.withLock { $0.eventsDropped &+= dropped } }
            return link.eventsTaken(dropped: dropped, now: MonotonicClock.now())
        case .sendSnapshot(let dropped):
            return sendSnapshot(dropped: dropped)
        case .sendEvents(let after):
            return sendEvents(after: after)
        case .sendHeartbeat(let horizon):
            connection?.encode(.heartbeat(monotonicNanos: horizon))
        case .write(let wait, let through):
            // A stalled socket with the log filling up: a short try, so that the writer comes
            // back to let the log go before the app's threads find it full.
            let filling = link.isStalled && tracker.unappliedUnits > tracker.logCapacity / 8
            let outcome = connection?.write(waitMilliseconds: filling ? min(wait, 1) : wait) ?? .failed
            if outcome == .all { control.sentThrough.store(through, ordering: .releasing) }
            return link.wrote(outcome, logBacklog: tracker.unappliedUnits, now: MonotonicClock.now())
        case .readIncoming:
            let incoming = connection?.readIncoming() ?? .ended
            return link.incomingRead(incoming, queueIsEmpty: feed.queue.isEmpty, now: MonotonicClock.now())
        case .inspectTracker:
            // The poll behind the list may add releases: the sequence is read after it.
            let latest = tracker.detachedAwaitingRelease().map(\.detachedAt).max()
            return link.trackerInspected(
                sequence: tracker.currentSequence, latestPendingDetach: latest,
                oldestUnexplained: tracker.oldestUnexplained(), now: MonotonicClock.now())
        case .explainLeaks(let detachedBy):
            return explainLeaks(detachedBy: detachedBy)
        case .settleLeaks(let detachedBy, let graceRanOutBy, let bound):
            return settleLeaks(detachedBy: detachedBy, graceRanOutBy: graceRanOutBy, boundNanos: bound)
        case .answer(let request):
            return answer(request)
        case .sayGoodbye(let reason, let wait):
            connection?.sayFinally(.goodbye(reason), waitMilliseconds: wait)
            closeConnection()
        case .close(let line):
            if let line { StandardError.write("[nodescope] \(line)\n") }
            closeConnection()
        case .finish:
            return .finish
        }
        return tick()
    }

    /// The link's next action now, told how much of the log waits (whether it holds more than a
    /// round is the link's to judge).
    private mutating func tick() -> AgentLink.Action {
        link.tick(now: MonotonicClock.now(), logBacklog: tracker.unappliedUnits)
    }

    /// Feeds a stop or an exit that was asked for since the last wait, before waiting again.
    private mutating func feedRequest() -> AgentLink.Action? {
        if !stopFed, control.stop.isSet {
            stopFed = true
            return link.stopRequested(now: MonotonicClock.now())
        }
        if !exitFed, control.exit.isSet {
            exitFed = true
            return link.exitRequested(now: MonotonicClock.now())
        }
        return nil
    }

    /// The socket file at the path, if there is one.
    private func examineSocket() -> AgentLink.SocketFile? {
        var info = stat()
        guard stat(settings.socketPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        return AgentLink.SocketFile(inode: UInt64(info.st_ino), modified: Int(info.st_mtim.tv_sec))
    }

    private mutating func connect() -> AgentLink.ConnectOutcome {
        switch UnixSocketClient.connect(to: settings.socketPath) {
        case .success(let socket):
            connection = CollectorConnection(socket: socket)
            return .connected
        case .failure(.untrusted(let reason)):
            return .untrusted(reason)
        case .failure:
            return .failed
        }
    }

    private mutating func sendSnapshot(dropped: UInt64) -> AgentLink.Action {
        if dropped > 0 { connection?.encode(.dropped(count: dropped)) }
        let snapshot = tracker.snapshot()
        connection?.encode(snapshot)
        // A collector that connects (again) learns the paths found before: an analysis runs
        // once per leak, and the daemon that heard it may have been restarted since.
        if !pathsResent, link.stream.protocolVersion >= 2 {
            pathsResent = true
            for frame in explained.stillAlive(in: snapshot) { connection?.encode(.retainers(frame)) }
        }
        control.statistics.withLock { $0.snapshotsSent &+= 1 }
        let latest = snapshot.nodes.lazy.filter { $0.objects.contains(where: \.isAlive) }.compactMap(\.detachedAt).max()
        return link.snapshotSent(sequence: snapshot.sequence, latestPendingDetach: latest, now: MonotonicClock.now())
    }

    /// The connection lent to the tracker for one call, to encode the changes it applies as it
    /// applies them: when `condition` holds (the stream sends deltas) and there is one.
    private mutating func lendConnection(if condition: Bool) -> StraightEncoding? {
        guard condition, connection != nil else { return nil }
        var lent: CollectorConnection?
        swap(&lent, &connection)
        let after = max(link.stream.lastSequence, straightlyEncoded?.through ?? 0)
        return lent.map { StraightEncoding(connection: $0, after: after) }
    }

    /// Takes the connection back from `straight`, and adds what it encoded to this round's.
    private mutating func takeBack(_ straight: StraightEncoding?) {
        guard let straight else { return }
        connection = straight.returnConnection()
        guard straight.count > 0 else { return }
        let earlier = straightlyEncoded
        let latestDetach = [earlier?.latestDetach, straight.latestDetach].compactMap { $0 }.max()
        straightlyEncoded = (
            max(earlier?.through ?? 0, straight.through), latestDetach, (earlier?.count ?? 0) &+ straight.count
        )
    }

    private mutating func sendEvents(after sequence: UInt64) -> AgentLink.Action {
        // What was encoded as it was applied first: the batch then holds later events only
        // (none, unless the round took them apart).
        var (last, latestDetach, sent) = straightlyEncoded ?? (sequence, nil, 0)
        straightlyEncoded = nil
        last = max(last, sequence)
        for event in batch where event.sequence > last {
            connection?.encode(event)
            last = event.sequence
            if case .detached = event.change { latestDetach = max(latestDetach ?? 0, event.time) }
            sent &+= 1
        }
        batch.removeAll(keepingCapacity: true)
        if sent > 0 { control.statistics.withLock { $0.eventsSent &+= sent } }
        return link.eventsSent(through: last, latestDetach: latestDetach, now: MonotonicClock.now())
    }

    /// Explains what holds the alive objects of the nodes whose grace ran out (on this thread:
    /// its own stack is left out of the analysis), one retainers frame per object.
    private mutating func explainLeaks(detachedBy: UInt64, boundNanos: UInt64? = nil) -> AgentLink.Action {
        let frames = tracker.explainLeaks(detachedBy: detachedBy, with: analysis, boundNanos: boundNanos)
        for frame in frames { connection?.encode(.retainers(frame)) }
        explained.keep(frames)
        return link.leaksExplained(oldestUnexplained: tracker.oldestUnexplained(), now: MonotonicClock.now())
    }

    /// An exit's settlement, within `boundNanos`: the nodes whose grace ran out by
    /// `graceRanOutBy` are leaks whatever the analysis finds, so they are explained as a live
    /// leak is (cycles before stacks: a stale stack word that a conservative scan finds inside a
    /// cycle would otherwise change the leak's path, and its fingerprint, from run to run); then
    /// the nodes still within their grace are settled (stacks and tasks before cycles: a cycle
    /// proves a leak only where nothing else reaches it).
    private mutating func settleLeaks(detachedBy: UInt64, graceRanOutBy: UInt64, boundNanos: UInt64) -> AgentLink.Action {
        let start = MonotonicClock.now()
        var frames = tracker.explainLeaks(
            detachedBy: min(graceRanOutBy, detachedBy), with: analysis, boundNanos: boundNanos, stacksFirst: false)
        let used = MonotonicClock.now() &- start
        if used < boundNanos {
            frames += tracker.explainLeaks(detachedBy: detachedBy, with: analysis, boundNanos: boundNanos - used, stacksFirst: true)
        }
        for frame in frames { connection?.encode(.retainers(frame)) }
        explained.keep(frames)
        return link.leaksExplained(oldestUnexplained: tracker.oldestUnexplained(), now: MonotonicClock.now())
    }

    /// Answers the collector's request to explain nodes: one retainers frame per alive object
    /// of those of them that are detached, then the `explained` frame.
    private mutating func answer(_ request: ExplainFrame) -> AgentLink.Action {
        let (frames, outcome) = tracker.explain(request.nodeIDs.map { NodeID(rawValue: $0) }, with: analysis)
        for frame in frames { connection?.encode(.retainers(frame)) }
        explained.keep(frames)
        connection?.encode(
            .explained(
                ExplainedFrame(requestID: request.requestID, outcome: outcome, objectCount: UInt16(clamping: frames.count))))
        return link.requestAnswered(now: MonotonicClock.now())
    }

    /// Closes the connection, if any, and forgets what is queued: a new connection starts
    /// with a snapshot.
    private mutating func closeConnection() {
        pathsResent = false
        feed.connected.store(false, ordering: .releasing)
        control.sentThrough.store(0, ordering: .releasing)
        connection?.close()
        connection = nil
        feed.queue.clear()
        batch.removeAll(keepingCapacity: true)
        straightlyEncoded = nil
        droppedByPoll = 0
    }
}
