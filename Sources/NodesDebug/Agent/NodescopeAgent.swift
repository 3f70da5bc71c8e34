#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NodescopeWire
import Synchronization

/// Sends a tracker's tree to a Nodescope collector over a Unix socket, live, without ever
/// slowing or endangering the host.
///
/// - The node lifecycle only appends to a bounded ``EventQueue`` (and only while connected);
///   one background thread encodes and writes. A full queue drops and counts; the writer then
///   sends `dropped N` and a fresh snapshot.
/// - Sends never raise SIGPIPE and never block for long; a collector that is absent, stopped
///   (SIGSTOP), killed or refusing leaves the host running.
/// - While disconnected it checks the socket path twice a second (a `stat`), so a collector that
///   appears is joined within a second; every connection starts with hello and a full snapshot.
/// - While a grace is pending it sends a heartbeat every 50 ms: the host time up to which its
///   stream is complete (releases noticed by polling included), by which the collector judges
///   graces. A collector that falls behind therefore never judges a node too early.
/// - At a normal exit it holds, when the collector asked for it, until every recently detached
///   node is released or its grace has run out, then writes everything queued (bounded by
///   ``AgentSettings/exitFlushBound(holdExit:)``), vouches for its last time and says goodbye;
///   a goodbye after a flush that ran out of time says so.
///
/// Enabled by `NODESCOPE_SOCKET`, by ``start(socketPath:tracker:)``, or by default in debug builds
/// (watching the default path); `NODESCOPE=off` disables it.
public final class NodescopeAgent: Sendable {
    /// Counters, for diagnostics and benchmarks.
    public struct Statistics: Sendable, Equatable {
        /// Connections made (each began with a snapshot).
        public var connections: UInt64
        /// Events written to the socket.
        public var eventsSent: UInt64
        /// Events dropped because the queue was full.
        public var eventsDropped: UInt64
        /// Snapshots sent (one per connection plus one after each drop).
        public var snapshotsSent: UInt64
    }

    /// The settings in force.
    public let settings: AgentSettings
    private let tracker: NodeTracker
    private let queue: EventQueue
    private let wake = ThreadSignal()
    private let exitDone = ThreadSignal()
    private let connected = Atomic<Bool>(false)
    private let idle = Atomic<Bool>(false)
    private let stopRequested = AtomicFlag()
    private let exitRequested = AtomicFlag()
    private let holdExit = Atomic<Bool>(false)
    private let graceNanos = Atomic<UInt64>(1_000_000_000)
    /// How many connection attempts the writer has finished (whatever their outcome).
    private let connectAttempts = Atomic<UInt64>(0)
    private let counters = Mutex(Statistics(connections: 0, eventsSent: 0, eventsDropped: 0, snapshotsSent: 0))

    private static let running = Mutex<NodescopeAgent?>(nil)
    private static let exitHookInstalled = AtomicFlag()

    // MARK: Starting and stopping

    /// Starts the agent for `tracker` (once per process). `socketPath` overrides the
    /// environment's choice. Returns nil when `NODESCOPE=off` or an agent already runs.
    @discardableResult
    public static func start(socketPath: String? = nil, tracker: NodeTracker = .shared) -> NodescopeAgent? {
        var settings = AgentSettings.fromEnvironment()
        if settings.mode == .disabled, AgentSettings.getEnvironment("NODESCOPE") != nil { return nil }
        if let socketPath {
            settings.mode = .explicit
            settings.socketPath = socketPath
        }
        if settings.mode == .disabled { settings.mode = .explicit }
        return launch(settings, tracker: tracker)
    }

    /// Starts the agent if the environment asks for it. `NodeTracker.shared` calls this when it
    /// is first used, which is the first node event of the process.
    static func startFromEnvironment(tracker: NodeTracker) {
        let settings = AgentSettings.fromEnvironment()
        guard settings.mode != .disabled else { return }
        _ = launch(settings, tracker: tracker)
    }

    private static func launch(_ settings: AgentSettings, tracker: NodeTracker) -> NodescopeAgent? {
        let agent: NodescopeAgent? = running.withLock { running in
            guard running == nil else { return nil }
            let agent = NodescopeAgent(settings: settings, tracker: tracker)
            running = agent
            return agent
        }
        guard let agent else { return nil }
        tracker.addSink(agent.feed)
        if exitHookInstalled.setIfClear() {
            atexit { NodescopeAgent.current?.finishAtExit() }
        }
        BackgroundThread.start { agent.run() }
        return agent
    }

    /// The running agent, if any.
    public static var current: NodescopeAgent? { running.withLock { $0 } }

    private init(settings: AgentSettings, tracker: NodeTracker, capacity: Int = 65_536) {
        self.settings = settings
        self.tracker = tracker
        self.queue = EventQueue(capacity: capacity)
        self.feed = Feed()
        feed.agent = self
    }

    /// The agent's sink, registered with its own tracker only: the queue behind it takes one
    /// producer, which that tracker's lock provides. (Were the agent itself a public sink, a
    /// second tracker could feed it concurrently.)
    private final class Feed: DebugSink, @unchecked Sendable {
        // Set once, right after init, before the feed is registered anywhere.
        unowned(unsafe) var agent: NodescopeAgent?

        func receive(_ event: DebugInformation) {
            agent?.enqueue(event)
        }
    }

    private let feed: Feed

    /// Stops the agent: says goodbye to the collector and lets the process run untracked by it.
    public func stop() {
        tracker.removeSink(feed)
        stopRequested.set()
        wake.signal()
        Self.running.withLock { if $0 === self { $0 = nil } }
    }

    // MARK: State

    /// Whether the agent is connected to a collector that accepted it.
    public var isConnected: Bool { connected.load(ordering: .acquiring) }

    /// The counters so far.
    public var statistics: Statistics { counters.withLock { $0 } }

    /// Waits until every event that happened before the call has been written to the socket,
    /// at most `timeoutNanoseconds`. Returns whether it was. For tests and tools; a host never
    /// needs to call it.
    @discardableResult
    public func waitUntilFlushed(timeoutNanoseconds: UInt64 = 1_000_000_000) -> Bool {
        let target = tracker.currentSequence
        let deadline = MonotonicClock.now() &+ timeoutNanoseconds
        while MonotonicClock.now() < deadline {
            if isConnected, sentThrough.load(ordering: .acquiring) >= target { return true }
            wake.signal()
            usleep(1_000)
        }
        return false
    }

    /// The sequence number of the last event (or snapshot) fully written on this connection.
    private let sentThrough = Atomic<UInt64>(0)

    // MARK: The hot path

    /// Queues one event for the writer. Called by the tracker under its lock; never blocks.
    @inline(__always)
    private func enqueue(_ event: DebugInformation) {
        guard connected.load(ordering: .relaxed) else { return }
        let count = queue.enqueue(event)
        // Wake the writer only when it sleeps long, or when the queue is half full.
        if idle.load(ordering: .relaxed) || count == queue.capacity / 2 {
            idle.store(false, ordering: .relaxed)
            wake.signal()
        }
    }

    // MARK: Exit

    /// Holds a normal exit as the collector asked, then flushes what is queued (bounded).
    func finishAtExit() {
        // A process that ends right after it started may not have finished its first connection:
        // when a socket was named, wait for that first attempt (a collector that is there
        // answers in milliseconds), so that its nodes are judged and not missed.
        if settings.mode == .explicit {
            let deadline = MonotonicClock.now() &+ settings.exitFlushBound(holdExit: false)
            while !isConnected, connectAttempts.load(ordering: .acquiring) == 0, MonotonicClock.now() < deadline {
                usleep(1_000)
            }
        }
        guard isConnected else { return }
        let held = holdExit.load(ordering: .relaxed)
        if held {
            let grace = graceNanos.load(ordering: .relaxed)
            let deadline = MonotonicClock.now() &+ grace
            while MonotonicClock.now() < deadline {
                let now = MonotonicClock.now()
                let undecided = tracker.detachedAwaitingRelease().contains { now &- $0.detachedAt < grace }
                if !undecided { break }
                usleep(2_000)
            }
        }
        exitRequested.set()
        wake.signal()
        // The writer keeps its own bound; this one only stops a wedged writer from hanging the exit.
        exitDone.wait(nanoseconds: settings.exitFlushBound(holdExit: held) &+ 250_000_000)
    }

    // MARK: The writer thread

    /// One accepted connection, as the writer thread sees it.
    private struct Link {
        var socket: UnixSocketClient
        var encoder = HostStreamEncoder()
        var decoder = FrameDecoder()
        var outgoing: [UInt8] = []
        var sentOffset = 0
        var lastSequence: UInt64 = 0
        var needsSnapshot = true
        /// The latest host time the collector was told the stream is complete up to.
        var vouchedUntil: UInt64 = 0
        /// When the last heartbeat was written (host clock).
        var lastHeartbeat: UInt64 = 0
        /// The end of the latest grace the collector has to judge: while `vouchedUntil` is
        /// behind it, heartbeats are due.
        var gracesEndBy: UInt64 = 0

        /// Whether a heartbeat is due at `now`.
        func heartbeatDue(now: UInt64) -> Bool {
            vouchedUntil < gracesEndBy && now &- lastHeartbeat >= NodescopeAgent.heartbeatInterval
        }
    }

    /// How long a connection waits for the answer to its hello before it is given up.
    static let helloAnswerWait: UInt64 = 30_000_000_000

    /// How often heartbeats go out while a grace is pending (so a leak is flagged within about
    /// this much of its deadline).
    static let heartbeatInterval: UInt64 = 50_000_000

    /// What only the writer thread touches, between connections.
    private struct WriterState {
        var batch: [DebugInformation] = []
        /// Whether a refusal or an unusable socket path was logged (once is enough).
        var problemLogged = false
        var retryAfter: UInt64 = 0
        var lastFailedFile: (inode: UInt64, modified: Int) = (0, 0)
    }

    private func run() {
        var link: Link?
        var state = WriterState()
        while true {
            if stopRequested.isSet {
                if var open = link { say(.goodbye(.agentDisabled), on: &open, waitMilliseconds: 100) }
                disconnect(&link)
                return
            }
            guard link != nil else {
                if exitRequested.isSet {
                    exitDone.signal()
                    return
                }
                link = connect(&state)
                connectAttempts.wrappingAdd(1, ordering: .releasing)
                if link == nil { wake.wait(nanoseconds: 500_000_000) }
                continue
            }
            let keepGoing = service(&link!, batch: &state.batch)
            if !keepGoing {
                disconnect(&link)
                continue
            }
            if exitRequested.isSet {
                finish(&link!, state: &state)
                disconnect(&link)
                exitDone.signal()
                return
            }
            if !queue.isEmpty {
                wake.wait(nanoseconds: 2_000_000)
            } else if link!.vouchedUntil < link!.gracesEndBy {
                wake.wait(nanoseconds: Self.heartbeatInterval)
            } else {
                idle.store(true, ordering: .relaxed)
                wake.wait(nanoseconds: 100_000_000)
            }
        }
    }

    /// The normal exit: writes everything queued (the releases of the app's last teardown are
    /// among them), vouches for the time reached, and says goodbye; all within the flush bound.
    /// A flush that runs out of time still says goodbye, one that says the stream was cut.
    private func finish(_ link: inout Link, state: inout WriterState) {
        let bound = settings.exitFlushBound(holdExit: holdExit.load(ordering: .relaxed))
        let deadline = MonotonicClock.now() &+ bound
        // Everything that happened before the exit: other threads may go on adding events, which
        // a flush cannot wait for.
        let target = tracker.currentSequence
        var open = true
        var complete = false
        while open, MonotonicClock.now() < deadline {
            // The last round vouches for the time of the exit, after a final poll.
            open = service(&link, batch: &state.batch, forceHeartbeat: true)
            if open, link.lastSequence >= target, link.sentOffset == link.outgoing.count {
                complete = true
                break
            }
        }
        guard open else { return }
        say(.goodbye(complete ? .normalExit : .flushIncomplete), on: &link, waitMilliseconds: 50)
    }

    /// Writes what is pending, then encodes and writes what was queued, and a heartbeat when one
    /// is due (or `forceHeartbeat`). False when the connection is lost.
    private func service(_ link: inout Link, batch: inout [DebugInformation], forceHeartbeat: Bool = false) -> Bool {
        // Finish a frame run that the socket did not take last time before encoding more.
        if link.sentOffset < link.outgoing.count {
            guard flush(&link, timeoutMilliseconds: 50) else { return false }
            if link.sentOffset < link.outgoing.count { return checkIncoming(&link) }
        }
        link.outgoing.removeAll(keepingCapacity: true)
        link.sentOffset = 0

        // The horizon is read before the queue is drained: every event stamped before it is in
        // the queue by now, and so is every release that the poll behind it noticed.
        let now = MonotonicClock.now()
        let horizon: UInt64? =
            forceHeartbeat || link.needsSnapshot || link.heartbeatDue(now: now)
            ? tracker.pollReleasesWithHorizon().horizon : nil
        let grace = graceNanos.load(ordering: .relaxed)
        let dropped = queue.take(into: &batch)
        var sent: UInt64 = 0
        var snapshots: UInt64 = 0
        if link.needsSnapshot || dropped > 0 {
            if dropped > 0 {
                link.encoder.encode(.dropped(count: dropped), into: &link.outgoing)
            }
            let snapshot = tracker.snapshot()
            link.encoder.encode(snapshot, into: &link.outgoing)
            link.lastSequence = snapshot.sequence
            link.needsSnapshot = false
            snapshots = 1
            for node in snapshot.nodes where node.objects.contains(where: \.isAlive) {
                if let detachedAt = node.detachedAt { link.gracesEndBy = max(link.gracesEndBy, detachedAt &+ grace) }
            }
            // Everything up to the horizon is in the snapshot: vouch for it before the deltas.
            if let horizon { vouch(horizon, on: &link, now: now) }
        }
        for event in batch where event.sequence > link.lastSequence {
            link.encoder.encode(event, into: &link.outgoing)
            link.lastSequence = event.sequence
            if case .detached = event.change { link.gracesEndBy = max(link.gracesEndBy, event.time &+ grace) }
            sent &+= 1
        }
        batch.removeAll(keepingCapacity: true)
        if snapshots == 0, let horizon { vouch(horizon, on: &link, now: now) }
        if sent > 0 || dropped > 0 || snapshots > 0 {
            counters.withLock {
                $0.eventsSent &+= sent
                $0.eventsDropped &+= dropped
                $0.snapshotsSent &+= snapshots
            }
        }
        guard flush(&link, timeoutMilliseconds: 50) else { return false }
        return checkIncoming(&link)
    }

    /// Appends a heartbeat that vouches for the stream up to `horizon`.
    private func vouch(_ horizon: UInt64, on link: inout Link, now: UInt64) {
        guard horizon > link.vouchedUntil else { return }
        link.encoder.encode(.heartbeat(monotonicNanos: horizon), into: &link.outgoing)
        link.vouchedUntil = horizon
        link.lastHeartbeat = now
    }

    private func flush(_ link: inout Link, timeoutMilliseconds: Int32) -> Bool {
        guard link.sentOffset < link.outgoing.count else { return true }
        switch link.socket.send(link.outgoing, from: link.sentOffset, timeoutMilliseconds: timeoutMilliseconds) {
        case let .success(offset):
            link.sentOffset = offset
            if offset == link.outgoing.count { sentThrough.store(link.lastSequence, ordering: .releasing) }
            return true
        case .failure:
            return false
        }
    }

    /// Reads anything the collector sent; false at end of stream or on a bad frame.
    private func checkIncoming(_ link: inout Link) -> Bool {
        switch link.socket.receive(timeoutMilliseconds: 0) {
        case let .success(bytes):
            guard !bytes.isEmpty else { return true }
            link.decoder.feed(bytes)
            do {
                while try link.decoder.next() != nil {}
                return true
            } catch {
                log("closing the connection to \(settings.socketPath): \(error)")
                return false
            }
        case .failure:
            return false
        }
    }

    /// Writes one final message, waiting a little for the socket to take it.
    private func say(_ message: WireMessage, on link: inout Link, waitMilliseconds: Int32) {
        var bytes = Array(link.outgoing[link.sentOffset...])
        link.encoder.encode(message, into: &bytes)
        _ = link.socket.send(bytes, from: 0, timeoutMilliseconds: waitMilliseconds)
    }

    private func disconnect(_ link: inout Link?) {
        connected.store(false, ordering: .releasing)
        sentThrough.store(0, ordering: .releasing)
        link?.socket.close()
        link = nil
        queue.clear()
    }

    /// Connects and shakes hands; nil when no collector is there or it refused.
    private func connect(_ state: inout WriterState) -> Link? {
        let now = MonotonicClock.now()
        guard now >= state.retryAfter else { return nil }
        guard settings.socketPath.utf8.count < 108 else {
            if !state.problemLogged {
                state.problemLogged = true
                log("the socket path \(settings.socketPath) is longer than a Unix socket allows (107 bytes); "
                    + "set NODESCOPE_SOCKET to a shorter path")
            }
            state.retryAfter = now &+ 60_000_000_000
            return nil
        }
        var info = stat()
        guard stat(settings.socketPath, &info) == 0, (info.st_mode & S_IFMT) == S_IFSOCK else { return nil }
        // A stale socket file that refused us is retried only when it changes, or every 5 s.
        let file = (UInt64(info.st_ino), Int(info.st_mtim.tv_sec))
        if file == state.lastFailedFile, now < state.retryAfter &+ 5_000_000_000 { return nil }

        let attempt = UnixSocketClient.connect(to: settings.socketPath)
        guard case var .success(socket) = attempt else {
            if case let .failure(.untrusted(reason)) = attempt, !state.problemLogged {
                state.problemLogged = true
                log("not connecting to \(settings.socketPath): \(reason); start your own collector (nodescope daemon)")
            }
            state.lastFailedFile = file
            state.retryAfter = now
            return nil
        }
        var link = Link(socket: socket)
        let hello = Hello(
            role: .host, pid: UInt32(truncatingIfNeeded: getpid()), monotonicNanos: MonotonicClock.now(),
            wallNanos: MonotonicClock.wallNow(), processName: Self.processName)
        link.encoder.encode(.hello(hello), into: &link.outgoing)
        guard case let .success(offset) = socket.send(link.outgoing, from: 0, timeoutMilliseconds: 1_000),
              offset == link.outgoing.count
        else {
            socket.close()
            return nil
        }
        link.outgoing.removeAll(keepingCapacity: true)

        // A collector that is stopped or busy answers late: wait for it (nothing is queued
        // before the answer, and the snapshot comes after it), unless the process is ending.
        let deadline = MonotonicClock.now() &+ Self.helloAnswerWait
        while MonotonicClock.now() < deadline, !stopRequested.isSet, !exitRequested.isSet {
            guard case let .success(bytes) = socket.receive(timeoutMilliseconds: 100) else { break }
            link.decoder.feed(bytes)
            let reply: WireMessage?
            do { reply = try link.decoder.next() } catch { break }
            switch reply {
            case nil:
                continue
            case let .helloAccepted(accepted)?:
                holdExit.store(accepted.holdExit, ordering: .relaxed)
                graceNanos.store(accepted.graceNanos, ordering: .relaxed)
                counters.withLock { $0.connections &+= 1 }
                state.lastFailedFile = (0, 0)
                connected.store(true, ordering: .releasing)
                return link
            case let .helloRefused(refused)?:
                if !state.problemLogged {
                    state.problemLogged = true
                    log("the collector at \(settings.socketPath) refused this process: \(refused.reason)")
                }
                state.retryAfter = MonotonicClock.now() &+ 10_000_000_000
                socket.close()
                return nil
            default:
                break
            }
            break
        }
        state.lastFailedFile = file
        state.retryAfter = MonotonicClock.now()
        socket.close()
        return nil
    }

    private func log(_ message: String) {
        StandardError.write("[nodescope] \(message)\n")
    }

    /// The process's name: the last path component of its executable.
    static let processName: String = {
        let path = CommandLine.arguments.first ?? "process"
        return path.split(separator: "/").last.map(String.init) ?? path
    }()
}
