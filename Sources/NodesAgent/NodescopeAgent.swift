import NodesTracking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
/// The parts: ``AgentFeed`` is what the app's threads touch (the queue); ``AgentLink`` decides,
/// as a pure state machine with the time passed in; ``AgentWriter`` is the background thread
/// that performs its decisions; ``WriterControl`` carries stop and exit requests to it.
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
    /// What the app's threads touch: the queue and the writer's wake-up.
    private let feed: AgentFeed
    /// Requests to the writer thread, and its reports.
    private let control = WriterControl()

    private static let running = Mutex<NodescopeAgent?>(nil)
    private static let exitHookInstalled = AtomicFlag()

    /// How long the exit hook waits for a writer that has not yet said when it will be done
    /// (a writer inside a long write or snapshot), beyond the first connection's wait.
    private static let exitMargin: UInt64 = 250_000_000

    // MARK: Starting and stopping

    /// Starts the agent for `tracker` (once per process). `socketPath` overrides the
    /// environment's choice. Returns nil when `NODESCOPE=off` or an agent already runs.
    /// (NodesDebug's `start(socketPath:)` starts it for the shared tracker.)
    @discardableResult
    public static func start(socketPath: String? = nil, tracker: NodeTracker) -> NodescopeAgent? {
        var settings = AgentSettings.fromEnvironment()
        if settings.mode == .disabled, AgentSettings.getEnvironment("NODESCOPE") != nil { return nil }
        if let socketPath {
            settings.mode = .explicit
            settings.socketPath = socketPath
        }
        if settings.mode == .disabled { settings.mode = .explicit }
        return launch(settings, tracker: tracker)
    }

    /// Starts the agent if the environment asks for it. `NodeTracker.shared` (NodesDebug) calls
    /// this when it is first used, which is the first node event of the process.
    package static func startFromEnvironment(tracker: NodeTracker) {
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
        tracker.setConsumerToWake(agent.feed)
        tracker.addSink(agent.feed)
        if exitHookInstalled.setIfClear() {
            atexit { NodescopeAgent.current?.finishAtExit() }
        }
        let (feed, control) = (agent.feed, agent.control)
        BackgroundThread.start(named: "nodescope-agent") {
            var writer = AgentWriter(settings: settings, tracker: tracker, feed: feed, control: control)
            writer.run()
        }
        return agent
    }

    /// The running agent, if any.
    public static var current: NodescopeAgent? { running.withLock { $0 } }

    private init(settings: AgentSettings, tracker: NodeTracker, capacity: Int = 65_536) {
        self.settings = settings
        self.tracker = tracker
        self.feed = AgentFeed(capacity: capacity)
    }

    /// Stops the agent: says goodbye to the collector and lets the process run untracked by it.
    public func stop() {
        tracker.removeSink(feed)
        tracker.setConsumerToWake(nil)
        control.stop.set()
        feed.wake.signal()
        Self.running.withLock { if $0 === self { $0 = nil } }
    }

    // MARK: State

    /// Whether the agent is connected to a collector that accepted it.
    public var isConnected: Bool { feed.connected.load(ordering: .acquiring) }

    /// The counters so far.
    public var statistics: Statistics { control.statistics.withLock { $0 } }

    /// Waits until every event that happened before the call has been written to the socket,
    /// at most `timeoutNanoseconds`. Returns whether it was. For tests and tools; a host never
    /// needs to call it.
    @discardableResult
    public func waitUntilFlushed(timeoutNanoseconds: UInt64 = 1_000_000_000) -> Bool {
        let target = tracker.currentSequence
        let deadline = MonotonicClock.now() &+ timeoutNanoseconds
        while MonotonicClock.now() < deadline {
            if isConnected, control.sentThrough.load(ordering: .acquiring) >= target { return true }
            feed.wake.signal()
            usleep(1_000)
        }
        return false
    }

    // MARK: Exit

    /// Asks the writer to hold a normal exit as the collector asked, flush what is queued
    /// (bounded) and say goodbye, and waits for it. The writer says by when it will be done
    /// (``AgentLink/exitDeadline``); this wait only stops a wedged writer from hanging the exit.
    func finishAtExit() {
        let requested = MonotonicClock.now()
        control.exit.set()
        feed.wake.signal()
        while true {
            let announced = control.exitDeadline.load(ordering: .acquiring)
            let limit =
                (announced != 0 ? announced : requested &+ settings.exitFlushBound(holdExit: false))
                &+ Self.exitMargin
            let now = MonotonicClock.now()
            guard now < limit else { return }
            if control.exitDone.wait(nanoseconds: min(limit &- now, 10_000_000)) { return }
        }
    }

    /// The process's name: the last path component of its executable.
    static let processName: String = {
        let path = CommandLine.arguments.first ?? "process"
        return path.split(separator: "/").last.map(String.init) ?? path
    }()
}
