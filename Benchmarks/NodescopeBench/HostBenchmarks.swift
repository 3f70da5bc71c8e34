import Foundation
import Nodes

final class BenchContext: AbstractContext<AnyCancellable> {}
final class BenchWorker: AbstractWorker<AnyCancellable> {}
final class BenchFlow: AbstractFlow<BenchContext, HeadlessViewController> {
    static func make() -> BenchFlow {
        BenchFlow(context: BenchContext(workers: [BenchWorker()]), viewController: HeadlessViewController(title: "Bench"))
    }
}

/// The host's costs: one lifecycle event on the calling thread, and a whole attach+detach
/// cycle, with the agent off, recording without an agent, connected, and with the collector
/// stopped (queue full, dropping).
func runHostBenchmarks(quick: Bool) -> [ReportRow] {
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
    agent.waitUntilFlushed()
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
    let offCycle = cycle(off)
    let connectedCycle = cycle(shared)
    agent.waitUntilFlushed(timeoutNanoseconds: 5_000_000_000)

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
        ReportRow(name: "one event, agent connected", figure: connectedEvent.text, target: "≤ 150 ns median"),
        ReportRow(name: "one event, collector stopped (queue full)", figure: stoppedEvent.text, target: "never blocks"),
        ReportRow(name: "attach+detach cycle, agent off", figure: offCycle.text, target: ""),
        ReportRow(
            name: "attach+detach cycle, agent connected",
            figure: connectedCycle.text + String(format: " = %.2f× off", connectedCycle.median / offCycle.median),
            target: "≤ 1.3× off"),
        ReportRow(
            name: "attach+detach cycle, collector stopped",
            figure: stoppedCycle.text + String(format: " = %.2f× off", stoppedCycle.median / offCycle.median),
            target: "never blocks"),
        ReportRow(
            name: "host registry memory per live node (4 objects each)",
            figure: String(format: "%.0f bytes", registryBytes), target: "≤ 128 bytes"),
        ReportRow(
            name: "agent counters", figure: "sent \(stats.eventsSent), dropped while stopped \(dropped), snapshots \(stats.snapshotsSent)",
            target: "drops counted, resync after"),
    ]
}

/// Runs `count` attach+detach cycles with the agent connected (or off), for a profiler.
func profileCycles(count: Int, connected: Bool) {
    let directory = benchSocketDirectory()
    let listener = BenchListener(path: directory + "/profile.sock")
    defer {
        unlink(listener.path)
        rmdir(directory)
    }
    let tracker = connected ? NodeTracker.shared : NodeTracker()
    let agent = connected ? NodescopeAgent.start(socketPath: listener.path, tracker: .shared) : nil
    if connected {
        guard let agent else { return }
        while !agent.isConnected { usleep(1_000) }
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
    agent?.waitUntilFlushed(timeoutNanoseconds: 30_000_000_000)
}

/// A fresh private (0700) directory in /tmp for a benchmark's socket.
func benchSocketDirectory() -> String {
    var template = Array("/tmp/nodescope-bench-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { fatalError("cannot create a directory in /tmp") }
    return String(cString: made)
}

/// The heap that a recording tracker's registry holds per live node (a flow, its context, one
/// worker and a view), as the growth of resident memory: the nodes' own objects are
/// made before the first reading.
func registryBytesPerNode(count: Int) -> Double {
    let tracker = NodeTracker()
    tracker.startRecording()
    let flows = (0..<count).map { _ in BenchFlow.make() }
    let root = NodeTracker.$current.withValue(tracker) { BenchFlow.make() }
    NodeTracker.$current.withValue(tracker) { root._start() }
    _ = tracker.currentSequence
    let before = residentBytes()
    let parts: [[NodeTracker.Part]] = flows.map { flow in
        [NodeTracker.Part(object: flow.context, role: .context)]
            + flow.context.workers.compactMap { $0 as? TrackedObjectBase }.map { NodeTracker.Part(object: $0, role: .worker) }
            + [NodeTracker.Part(object: flow.viewController, role: .view)]
    }
    let partsBytes = residentBytes() - before
    for (flow, flowParts) in zip(flows, parts) {
        tracker.attach(flow, role: .flow, parts: flowParts, parent: root.nodeID, kind: .flow, name: "BenchFlow", site: nil)
    }
    _ = tracker.currentSequence
    let after = residentBytes()
    withExtendedLifetime((flows, parts, root)) {}
    return Double(after - before - partsBytes) / Double(count)
}
