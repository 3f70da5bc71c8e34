import Foundation
import Nodes

final class BenchContext: AbstractContext<CancellationToken> {}
final class BenchWorker: AbstractWorker<CancellationToken> {}
final class BenchFlow: AbstractFlow<BenchContext, HeadlessViewController> {
    static func make() -> BenchFlow {
        BenchFlow(context: BenchContext(workers: [BenchWorker()]), viewController: HeadlessViewController(title: "Bench"))
    }
}

/// The host's costs: one lifecycle event on the calling thread, and a whole attach+detach
/// cycle, with the agent off, recording without an agent, connected, and with the collector
/// stopped (queue full, dropping).
@MainActor func runHostBenchmarks(quick: Bool) -> [ReportRow] {
    let samples = quick ? 50 : 200
    final class Anchor {}
    let anchor = Anchor()

    // One event: a state change of an attached node.
    let off = NodeTracker()
    let offNode = off.attach(anchor, role: .flow, parent: nil, kind: .flow)
    let offEvent = measure(samples: samples) { off.setState(.active, of: offNode) }

    let recording = NodeTracker()
    recording.startRecording()
    let recordingNode = recording.attach(anchor, role: .flow, parent: nil, kind: .flow)
    let recordingEvent = measure(samples: samples) { recording.setState(.active, of: recordingNode) }

    // In a private directory: hosts refuse a socket in a directory others may write (SocketTrust).
    let directory = benchSocketDirectory()
    let listener = BenchListener(path: directory + "/bench.sock")
    defer {
        unlink(listener.path)
        rmdir(directory)
    }
    guard let agent = NodescopeAgent.start(socketPath: listener.path, tracker: .shared) else {
        print("the agent did not start (NODESCOPE=off?)")
        return []
    }
    let deadline = Date().addingTimeInterval(5)
    while !agent.isConnected, Date() < deadline { usleep(1_000) }
    guard agent.isConnected else {
        print("the agent did not connect")
        return []
    }
    let shared = NodeTracker.shared
    let sharedNode = shared.attach(anchor, role: .flow, parent: nil, kind: .flow)
    Bounded.flush(agent, "the first node")
    let connectedEvent = measure(samples: samples) { shared.setState(.active, of: sharedNode) }
    agent.waitUntilFlushed(timeoutNanoseconds: 5_000_000_000)

    // Whole cycles through the runtime: build a node, attach it, detach it, release it.
    func cycle(_ tracker: NodeTracker) -> Timing {
        NodeTracker.$current.withValue(tracker) {
            let root = BenchFlow.make()
            root._start()
            return measure(samples: samples, batch: 200) {
                let child = BenchFlow.make()
                root.attach(starting: child)
                root.detach(ending: child)
            }
        }
    }
    // Off and connected in alternating blocks, so that both see the same machine (a shared one
    // changes speed within seconds); the ratio is that of their medians.
    let bursts = alternatingCycles(off: off, connected: shared, agent: agent, pairs: quick ? 20 : 60, block: 2_000)
    agent.waitUntilFlushed(timeoutNanoseconds: 5_000_000_000)
    // Back to back, long enough that the writer has to keep up (its log holds about 3,800
    // cycles), in alternating pairs of long runs so that the machine's swings cancel; each run's
    // backlog is flushed, untimed, before the next.
    let sustained = alternatingCycles(off: off, connected: shared, agent: agent, pairs: quick ? 5 : 9, block: 40_000)
    let sustainedOff = sustained.off

    // The collector stops reading: the socket buffer and then the queue fill up; events drop.
    listener.isPaused = true
    let fill = Date().addingTimeInterval(0.5)
    while Date() < fill { shared.setState(.active, of: sharedNode) }
    let stoppedEvent = measure(samples: samples) { shared.setState(.active, of: sharedNode) }
    let stoppedCycle = cycle(shared)
    listener.isPaused = false
    agent.waitUntilFlushed(timeoutNanoseconds: 5_000_000_000)
    let stats = agent.statistics
    let dropped = stats.eventsDropped
    let registryBytes = registryBytesPerNode(count: quick ? 20_000 : 100_000)

    return [
        ReportRow(name: "one event, agent off (not recording)", figure: offEvent.text, target: "one branch"),
        ReportRow(name: "one event, recording, no agent", figure: recordingEvent.text, target: ""),
        ReportRow(name: "one event, agent connected", figure: connectedEvent.text, target: "≤ 25 ns median, p90 ≤ 100 ns"),
        ReportRow(name: "one event, collector stopped (queue full)", figure: stoppedEvent.text, target: "never blocks"),
        ReportRow(name: "attach+detach cycle, agent off", figure: bursts.off.text, target: ""),
        ReportRow(
            name: "attach+detach cycle, agent connected (blocks of 2,000 cycles, alternating with off)",
            figure: bursts.connected.text
                + String(
                    format:
                        " = %.2f× off (the ratios of the %d pairs of blocks: p10 %.2f×, median %.2f×, p90 %.2f×; in the calling thread's CPU time: median %.2f×; the thread lost its core %d times in the connected blocks, %d in the off ones)",
                    bursts.connected.median / bursts.off.median, bursts.pairs, bursts.ratios.p10, bursts.ratios.median,
                    bursts.ratios.p90, bursts.cpuRatios.median, bursts.preempted.connected, bursts.preempted.off),
            target: "≤ 1.15× off"),
        ReportRow(
            name: "attach+detach cycle, sustained (runs of 40,000 back to back, alternating with off), off and connected",
            figure: sustained.off.text + " and " + sustained.connected.text
                + String(
                    format:
                        " = %.2f× off (the ratios of the %d pairs of runs: p10 %.2f×, median %.2f×, p90 %.2f×; in the calling thread's CPU time: median %.2f×)",
                    sustained.connected.median / sustained.off.median, sustained.pairs, sustained.ratios.p10,
                    sustained.ratios.median, sustained.ratios.p90, sustained.cpuRatios.median),
            target: "≤ 1.3× off"),
        ReportRow(
            name: "attach+detach cycle, collector stopped",
            figure: stoppedCycle.text + String(format: " = %.2f× off", stoppedCycle.median / sustainedOff.median),
            target: "≤ 1.5× off, never blocks"),
        ReportRow(
            name: "host registry memory per live node (4 objects each)",
            figure: String(format: "%.0f bytes", registryBytes) + " (the tracker's fixed cost apart: `registry-bytes`)",
            target: "≤ 128 bytes"),
        ReportRow(
            name: "agent counters", figure: "sent \(stats.eventsSent), dropped while stopped \(dropped), snapshots \(stats.snapshotsSent)",
            target: "drops counted, resync after"),
    ]
}

/// What ``alternatingCycles(off:connected:agent:pairs:block:)`` measured: per-cycle wall-clock
/// times of each side, the ratios of the pairs, and the same ratios in the calling thread's CPU
/// time.
struct AlternatingCycles {
    var pairs: Int
    var off: Timing
    var connected: Timing
    var ratios: Timing
    var cpuRatios: Timing
    /// How often the calling thread lost its core to another thread in all the blocks of
    /// each side.
    var preempted: (off: Int, connected: Int)
}

/// Attach+detach cycles, wall clock, in `pairs` pairs of blocks of `block` cycles: one with the
/// agent off, one connected, alternately. The writer's backlog of a connected block is flushed
/// (untimed) before the next block, so that it does not slow the off block that follows.
func alternatingCycles(
    off: NodeTracker, connected: NodeTracker, agent: NodescopeAgent, pairs: Int, block: Int,
    sides: (off: Bool, connected: Bool) = (true, true)
) -> AlternatingCycles {
    func rig(_ tracker: NodeTracker) -> BenchFlow {
        NodeTracker.$current.withValue(tracker) {
            let root = BenchFlow.make()
            root._start()
            return root
        }
    }
    /// The wall-clock and CPU time per cycle of one block, and how often the scheduler took
    /// the thread's core from it meanwhile.
    func run(_ tracker: NodeTracker, under root: BenchFlow) -> (wall: Double, cpu: Double, preempted: Int) {
        guard tracker === off ? sides.off : sides.connected else { return (1, 1, 0) }
        return NodeTracker.$current.withValue(tracker) {
            let preemptedBefore = threadPreemptions()
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuStart = threadCPUTime()
            for _ in 0..<block {
                let child = BenchFlow.make()
                root.attach(starting: child)
                root.detach(ending: child)
            }
            let cpu = Double(threadCPUTime() - cpuStart) / Double(block)
            let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / Double(block)
            return (wall, cpu, threadPreemptions() - preemptedBefore)
        }
    }
    let (offRoot, connectedRoot) = (rig(off), rig(connected))
    var (offTimes, connectedTimes, ratios, cpuRatios) = ([Double](), [Double](), [Double](), [Double]())
    var preempted = (off: 0, connected: 0)
    for pair in -3..<pairs {  // three pairs of warm-up
        let offTime = run(off, under: offRoot)
        let connectedTime = run(connected, under: connectedRoot)
        // The writer takes what is left, as it would in an app (a flush right away would
        // apply it on this thread), then the flush confirms it was sent.
        usleep(20_000)
        Bounded.flush(agent, "a connected block's backlog", seconds: 30)
        guard pair >= 0 else { continue }
        offTimes.append(offTime.wall)
        connectedTimes.append(connectedTime.wall)
        ratios.append(connectedTime.wall / offTime.wall)
        cpuRatios.append(connectedTime.cpu / offTime.cpu)
        preempted.off += offTime.preempted
        preempted.connected += connectedTime.preempted
    }
    return AlternatingCycles(
        pairs: pairs, off: Timing(of: offTimes), connected: Timing(of: connectedTimes), ratios: Timing(of: ratios),
        cpuRatios: Timing(of: cpuRatios), preempted: preempted)
}

/// How often the calling thread has lost its core to another thread (involuntary context
/// switches).
func threadPreemptions() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(1), &usage)  // RUSAGE_THREAD (1), which Glibc's module leaves out
    return usage.ru_nivcsw
}

/// The calling thread's CPU time, in nanoseconds.
func threadCPUTime() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// The alternating cycles of the host benchmark, for a profiler.
func profileAlternating(pairs: Int, sides: (off: Bool, connected: Bool)) {
    let directory = benchSocketDirectory()
    let listener = BenchListener(path: directory + "/profile.sock")
    defer {
        unlink(listener.path)
        rmdir(directory)
    }
    guard let agent = NodescopeAgent.start(socketPath: listener.path, tracker: .shared) else { return }
    Bounded.wait(for: "the agent's connection") { agent.isConnected }
    let result = alternatingCycles(
        off: NodeTracker(), connected: .shared, agent: agent, pairs: pairs, block: 2_000, sides: sides)
    print(
        "off \(result.off.text), connected \(result.connected.text), "
            + String(
                format: "ratios %.3f p10 %.3f p90 %.3f cpu %.3f, preempted %d off %d connected", result.ratios.median,
                result.ratios.p10, result.ratios.p90, result.cpuRatios.median, result.preempted.off,
                result.preempted.connected))
}

/// Runs `count` attach+detach cycles with the agent connected (or off), for a profiler.
func profileCycles(count: Int, connected: Bool, recording: Bool = false) {
    let directory = benchSocketDirectory()
    let listener = BenchListener(path: directory + "/profile.sock")
    defer {
        unlink(listener.path)
        rmdir(directory)
    }
    let tracker = connected ? NodeTracker.shared : NodeTracker()
    if recording { tracker.startRecording() }
    let agent = connected ? NodescopeAgent.start(socketPath: listener.path, tracker: .shared) : nil
    if connected {
        guard let agent else { return }
        Bounded.wait(for: "the agent's connection") { agent.isConnected }
    }
    NodeTracker.$current.withValue(tracker) {
        let root = BenchFlow.make()
        root._start()
        for _ in 0..<count {
            let child = BenchFlow.make()
            root.attach(starting: child)
            root.detach(ending: child)
        }
    }
    if let agent {
        // The writer applies what is left of the log, as it applied the rest: the flush below
        // reads the tracker's sequence, which would apply it on this thread (through the slower
        // path of events made for the writer's queue) and count a varying tail of the run as
        // this thread's (callgrind: ±300 instructions a cycle between runs).
        Bounded.wait(for: "the writer to apply the log", seconds: 60) { tracker.logBacklog == 0 }
        Bounded.flush(agent, "the cycles", seconds: 60)
    }
    if recording { _ = tracker.currentSequence }
}

/// A fresh private (0700) directory in /tmp for a benchmark's socket.
func benchSocketDirectory() -> String {
    var template = Array("/tmp/nodescope-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a directory in /tmp") }
    return String(cString: made)
}

/// The heap that a recording tracker's registry holds per live node (a flow, its context, one
/// worker and a view), as the growth of resident memory: the nodes' own objects are
/// made before the first reading. The tracker's fixed costs (its log of recorded changes, a ring
/// of 4,096 units whose pages are touched as it first goes round) are paid before the first
/// reading too, by attaching and releasing 2,048 nodes; ``trackerFixedBytes()`` gives them.
@MainActor func registryBytesPerNode(count: Int) -> Double {
    let tracker = NodeTracker()
    tracker.startRecording()
    let root = NodeTracker.$current.withValue(tracker) { BenchFlow.make() }
    NodeTracker.$current.withValue(tracker) { root._start() }
    warmUp(tracker, under: root, flows: (0..<2_048).map { _ in BenchFlow.make() })
    let flows = (0..<count).map { _ in BenchFlow.make() }
    let before = residentBytes()
    let parts = flows.map { benchParts($0) }
    let partsBytes = residentBytes() - before
    for (flow, flowParts) in zip(flows, parts) {
        tracker.attach(flow, role: .flow, parts: flowParts, parent: root.nodeID, kind: .flow, name: "BenchFlow", site: nil)
    }
    _ = tracker.currentSequence
    let after = residentBytes()
    withExtendedLifetime((flows, parts, root)) {}
    return Double(after - before - partsBytes) / Double(count)
}

/// What a fresh recording tracker costs before its nodes: the resident growth of attaching and
/// releasing 2,048 nodes (the log's ring touched once round, the registry's first tables).
/// Only meaningful first thing in a fresh process (memory freed before is reused unseen).
@MainActor func trackerFixedBytes() -> Int {
    let tracker = NodeTracker()
    tracker.startRecording()
    let root = NodeTracker.$current.withValue(tracker) { BenchFlow.make() }
    NodeTracker.$current.withValue(tracker) { root._start() }
    // The nodes' objects and parts are made before the first reading, and kept until after.
    let flows = (0..<2_048).map { _ in BenchFlow.make() }
    let parts = flows.map { benchParts($0) }
    let before = residentBytes()
    warmUp(tracker, under: root, flows: flows, parts: parts)
    let after = residentBytes()
    withExtendedLifetime((root, flows, parts)) {}
    return after - before
}

/// Attaches `flows` with their parts, then detaches them (their objects are released when the
/// caller lets them go).
@MainActor private func warmUp(_ tracker: NodeTracker, under root: BenchFlow, flows: [BenchFlow], parts: [[NodeTracker.Part]]? = nil) {
    var ids: [NodeID] = []
    for (offset, flow) in flows.enumerated() {
        ids.append(
            tracker.attach(
                flow, role: .flow, parts: parts?[offset] ?? benchParts(flow), parent: root.nodeID, kind: .flow,
                name: "BenchFlow", site: nil))
    }
    _ = tracker.currentSequence
    for id in ids { tracker.detach(id) }
    _ = tracker.currentSequence
}

/// The parts of a bench flow, as the runtime registers them with its attach.
@MainActor private func benchParts(_ flow: BenchFlow) -> [NodeTracker.Part] {
    [NodeTracker.Part(object: flow.context, role: .context)]
        + flow.context.workers.compactMap { $0 as? TrackedObjectBase }.map { NodeTracker.Part(object: $0, role: .worker) }
        + [NodeTracker.Part(object: flow.viewController, role: .view)]
}
