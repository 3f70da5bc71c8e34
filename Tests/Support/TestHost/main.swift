// test-host: a host process on the Nodes runtime for the agent's end-to-end tests. It reports
// through the agent that NODESCOPE_SOCKET enables, and prints what it did on stdout.
// Usage: test-host tree3 | names | churn S | wait-connect S | exit-after-detach [LATE_MS] | serve S | random SEED EVENTS | pulse N
import Glibc
import Nodes
import SeededRandom

/// Writes a line to stdout at once (print is buffered when stdout is a pipe).
func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String, status: Int32) -> Never {
    var text = message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}

final class HostContext: AbstractContext<CancellationToken> {}
final class HostWorker: AbstractWorker<CancellationToken> {}
final class HostFlow: AbstractFlow<HostContext, HeadlessViewController> {
    let name: String
    init(_ name: String, workers: Int = 1) {
        self.name = name
        super.init(
            context: HostContext(workers: (0..<workers).map { _ in HostWorker() }),
            viewController: HeadlessViewController(title: name))
    }
    override var nodeName: String { name }

    @discardableResult
    func show(_ name: String) -> HostFlow {
        let child = HostFlow(name)
        viewController.present(child.getViewController())
        attach(starting: child)
        return child
    }

    func hide(_ child: HostFlow) {
        detach(ending: child)
        viewController.dismiss(child.getViewController())
    }
}

/// Something long-lived that retains a detached node's context: a leak made on purpose.
nonisolated(unsafe) var leakedContexts: [AnyObject] = []

func milliseconds() -> UInt64 { MonotonicClock.now() / 1_000_000 }

/// One line per node: what the end-to-end tests compare with the collector's view.
func canonicalLines(_ snapshot: TreeSnapshot) -> [String] {
    snapshot.nodes.map { node in
        let alive = node.objects.filter(\.isAlive).map(\.role.rawValue).joined(separator: ",")
        return "\(node.id.rawValue) \(node.parent?.rawValue ?? 0) \(node.kind) \(node.name) "
            + "\(node.state?.description ?? "-") \(node.isDetached ? "detached" : "attached") [\(alive)]"
    }
}

func waitForConnection(seconds: Double) -> Bool {
    let deadline = milliseconds() + UInt64(seconds * 1_000)
    while milliseconds() < deadline {
        if NodescopeAgent.current?.isConnected == true { return true }
        usleep(5_000)
    }
    return false
}

func step(_ number: Int) {
    let snapshot = NodeTracker.shared.snapshot()
    emit("STEP \(number) SEQ \(snapshot.sequence)")
    for line in canonicalLines(snapshot) { emit("  \(line)") }
    NodescopeAgent.current?.waitUntilFlushed()
}

func printStatistics() {
    guard let stats = NodescopeAgent.current?.statistics else {
        emit("STATS none")
        return
    }
    emit("STATS connections=\(stats.connections) sent=\(stats.eventsSent) dropped=\(stats.eventsDropped) snapshots=\(stats.snapshotsSent)")
}

// Each step is a function, so that its locals are gone when it returns: a local that outlives
// a detach would keep the node alive (the tree would show it, rightly, as not released).
func buildBranches(of root: HostFlow) {
    let a = root.show("A")
    root.show("B")
    let a1 = a.show("A1")
    a.show("A2")
    a1.show("A1x")
}

func hideBranch(named name: String, of root: HostFlow) {
    if let flow = root.subFlows(ofType: HostFlow.self).first(where: { $0.name == name }) { root.hide(flow) }
}

func leakBranch(named name: String, of root: HostFlow) {
    let flow = root.show(name)
    leakedContexts.append(flow.context)
    root.hide(flow)
}

/// The roots, kept until the process exits, as an app's window keeps its root flow: a started
/// flow that is released without ending is a lifecycle violation (an assertion in debug builds).
nonisolated(unsafe) var keptRoots: [AnyObject] = []

func keptRoot(_ root: HostFlow) -> HostFlow {
    keptRoots.append(root)
    return root
}

/// The root flow, kept and started once the agent is connected (exits with status 3 after 10 s
/// without a connection).
func connectedRoot() -> HostFlow {
    let root = keptRoot(HostFlow("Root"))
    guard waitForConnection(seconds: 10) else {
        emit("NOT CONNECTED")
        exit(3)
    }
    root._start()
    return root
}

func runTree3() {
    let root = connectedRoot()
    step(1)
    buildBranches(of: root)
    step(2)
    hideBranch(named: "A", of: root)
    step(3)
    leakBranch(named: "C", of: root)
    step(4)
    printStatistics()
}

/// Shows and hides 1,500 children of distinct names, then shows ten of new names: by then the
/// registry's table of node descriptors has swept the 1,500 unused ones, and the new names take
/// their ids. (The agent's writer keeps each descriptor's wire ids by id: a stream whose new
/// nodes bore old names would show it kept them past the sweep.)
func runNames() {
    let root = connectedRoot()
    step(1)
    showAndHide(count: 1_500, of: root)
    waitForTheWriter()
    step(2)
    for number in 0..<10 { root.show("M\(number)") }
    waitForTheWriter()
    step(3)
    emit("SWEEPS \(NodeTracker.shared.currentRegistry().descriptorEpoch.nodeSweeps)")
    printStatistics()
}

/// Waits (at most 5 s) until the agent's writer has applied every change logged: a snapshot
/// taken before would apply them on this thread, not through the writer's encoding.
func waitForTheWriter() {
    let deadline = milliseconds() + 5_000
    while NodeTracker.shared.hasUnappliedChanges, milliseconds() < deadline { usleep(1_000) }
}

func showAndHide(count: Int, of root: HostFlow) {
    for number in 0..<count { root.hide(root.show("N\(number)")) }
}

/// Detaches two nodes just before a normal exit: "Late", whose context a timer releases after
/// 300 ms, and "Leak", whose context is kept forever. The exit hold decides what is seen.
func detachBeforeExit(of root: HostFlow, lateAfterMilliseconds: UInt64 = 300) {
    let late = root.show("Late")
    let leak = root.show("Leak")
    leakedContexts.append(leak.context)
    nonisolated(unsafe) var keeper: AnyObject? = late.context
    GraceTimer.shared.schedule(afterNanoseconds: lateAfterMilliseconds * 1_000_000) { keeper = nil }
    root.hide(late)
    root.hide(leak)
    _ = keeper
}

func runExitAfterDetach(lateAfterMilliseconds: UInt64) {
    let root = connectedRoot()
    detachBeforeExit(of: root, lateAfterMilliseconds: lateAfterMilliseconds)
    emit("DETACHED \(milliseconds())")
}

/// Keeps running until SIGTERM (or `seconds`), with a small tree and one leaked node.
nonisolated(unsafe) var stopRequested = false

/// Stops on SIGTERM. The signal is unblocked first: a parent (a test runner) may have left it
/// blocked in the mask that this process inherited.
func stopOnTerminate() {
    signal(SIGTERM) { _ in stopRequested = true }
    var set = sigset_t()
    sigemptyset(&set)
    sigaddset(&set, SIGTERM)
    sigprocmask(SIG_UNBLOCK, &set, nil)
}

func runServe(seconds: Double) {
    stopOnTerminate()
    let root = keptRoot(HostFlow("Root"))
    root._start()
    buildBranches(of: root)
    leakBranch(named: "Leaky", of: root)
    emit("DETACHED \(milliseconds())")
    let end = milliseconds() + UInt64(seconds * 1_000)
    while !stopRequested, milliseconds() < end { usleep(20_000) }
    emit("STOPPING")
}

/// Like `serve`, with node names that a terminal would obey if they were printed raw: ESC
/// sequences (clear the screen, retitle the window), a newline that fakes a row, BEL, DEL and a
/// C1 control. One of them leaks, so that leak reports show it too.
func runHostileNames(seconds: Double) {
    stopOnTerminate()
    let root = keptRoot(HostFlow("Root\u{1B}[2J\u{1B}]0;pwned\u{07}"))
    root._start()
    _ = root.show("Child\n4242 fake-row\u{9B}31m\u{7F}")
    leakBranch(named: "Leak\u{1B}[31mRED", of: root)
    emit("DETACHED \(milliseconds())")
    let end = milliseconds() + UInt64(seconds * 1_000)
    while !stopRequested, milliseconds() < end { usleep(20_000) }
    emit("STOPPING")
}

/// Random lifecycle events through the runtime until the tracker has counted `events`: attach
/// under a random node, detach a random subtree (sometimes leaking it), release some leaks.
/// Then prints its own final snapshot, flushes, says READY and waits for SIGTERM.
func runRandom(seed: UInt64, events: UInt64) {
    stopOnTerminate()
    var random = SplitMix64(seed: seed)
    let names = ["Feed", "Profile", "Settings", "Detail", "Share", "Card", "Chat", "Search"]
    let root = keptRoot(HostFlow("Root"))
    root._start()
    var attached: [(flow: HostFlow, parent: HostFlow)] = []
    var kept: [AnyObject] = []
    while NodeTracker.shared.currentSequence < events {
        switch random.below(10) {
        case 0..<5:
            let parent = attached.isEmpty || random.below(4) == 0 ? root : attached[random.below(attached.count)].flow
            let child = HostFlow(names[random.below(names.count)], workers: random.below(3))
            parent.viewController.present(child.getViewController())
            parent.attach(starting: child)
            attached.append((child, parent))
        case 5..<8 where !attached.isEmpty:
            let (flow, parent) = attached[random.below(attached.count)]
            if random.below(5) == 0 { kept.append(flow.context) }
            parent.hide(flow)
            attached.removeAll { !$0.flow.isStarted }
        case 8 where !kept.isEmpty:
            kept.remove(at: random.below(kept.count))
        default:
            break
        }
    }
    attached.removeAll()
    NodeTracker.shared.pollReleases()
    let snapshot = NodeTracker.shared.snapshot()
    for line in canonicalLines(snapshot) { emit("FINAL \(line)") }
    NodescopeAgent.current?.waitUntilFlushed(timeoutNanoseconds: 10_000_000_000)
    emit("READY \(snapshot.nodes.count)")
    while !stopRequested { usleep(20_000) }
    _ = kept
}

func runChurn(seconds: Double) {
    let root = HostFlow("Root")  // ended below, so released when the function returns
    root._start()
    let end = milliseconds() + UInt64(seconds * 1_000)
    var nextReport = milliseconds()
    var cycles = 0
    while milliseconds() < end {
        let child = root.show("Child")
        child.show("Grandchild")
        root.hide(child)
        cycles += 1
        if milliseconds() >= nextReport {
            emit("PROGRESS \(milliseconds()) \(cycles)")
            nextReport = milliseconds() + 100
        }
    }
    emit("DONE \(cycles)")
    NodescopeAgent.current?.waitUntilFlushed(timeoutNanoseconds: 3_000_000_000)
    printStatistics()
    root._end()
}

func runWaitConnect(seconds: Double) {
    let root = keptRoot(HostFlow("Root"))
    root._start()
    root.show("Waiting")
    emit("STARTED \(milliseconds())")
    guard waitForConnection(seconds: seconds) else {
        emit("NOT CONNECTED")
        exit(3)
    }
    emit("CONNECTED \(milliseconds())")
    step(1)
    printStatistics()
}

/// The wall clock in milliseconds since 1970, to compare with a browser's `Date.now()`.
func wallMilliseconds() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return UInt64(now.tv_sec) * 1_000 + UInt64(now.tv_nsec) / 1_000_000
}

/// Once connected, attaches `count` nodes `Pulse1`, `Pulse2` … every `interval` ms, each
/// announced with its wall-clock time (`PULSE k MS`), then serves until SIGTERM (at most a minute):
/// for the web view's measure of the time from an attach to its row on the page.
func runPulse(count: Int, interval: UInt32) {
    stopOnTerminate()
    let root = keptRoot(HostFlow("Root"))
    root._start()
    guard waitForConnection(seconds: 30) else {
        emit("NOT CONNECTED")
        exit(3)
    }
    emit("CONNECTED \(milliseconds())")
    usleep(1_000_000)
    for index in 1...max(count, 1) where !stopRequested {
        let started = wallMilliseconds()
        root.show("Pulse\(index)")
        emit("PULSE \(index) \(started)")
        usleep(interval * 1_000)
    }
    let end = milliseconds() + 60_000
    while !stopRequested, milliseconds() < end { usleep(20_000) }
    emit("STOPPING")
}

let arguments = CommandLine.arguments
switch arguments.dropFirst().first {
case "tree3": runTree3()
case "names": runNames()
case "churn": runChurn(seconds: arguments.count > 2 ? Double(arguments[2]) ?? 3 : 3)
case "exit-after-detach": runExitAfterDetach(lateAfterMilliseconds: arguments.count > 2 ? UInt64(arguments[2]) ?? 300 : 300)
case "hostile-names": runHostileNames(seconds: arguments.count > 2 ? Double(arguments[2]) ?? 60 : 60)
case "serve": runServe(seconds: arguments.count > 2 ? Double(arguments[2]) ?? 60 : 60)
case "random":
    runRandom(
        seed: arguments.count > 2 ? UInt64(arguments[2]) ?? 1 : 1,
        events: arguments.count > 3 ? UInt64(arguments[3]) ?? 10_000 : 10_000)
case "wait-connect": runWaitConnect(seconds: arguments.count > 2 ? Double(arguments[2]) ?? 10 : 10)
case "pulse": runPulse(count: arguments.count > 2 ? Int(arguments[2]) ?? 20 : 20, interval: 150)
default:
    fail(
        "usage: test-host tree3 | names | churn SECONDS | wait-connect SECONDS | exit-after-detach [LATE_MS] | serve SECONDS | hostile-names SECONDS | random SEED EVENTS | pulse COUNT",
        status: 2)
}
