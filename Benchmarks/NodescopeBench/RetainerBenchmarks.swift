import Foundation
import Nodes
import NodesRetainers
import NodescopeWire

/// A long-lived service that keeps callbacks: where the benchmark's leaked context is held.
final class BenchSession: @unchecked Sendable {
    static let shared = BenchSession()
    var listeners: [() -> Void] = []
}

/// The other half of a retain cycle with a context.
final class BenchPartner {
    var context: LeakyBenchContext?
}

/// The context of the benchmark's leaked nodes.
final class LeakyBenchContext: AbstractContext<CancellationToken> {
    var partner: BenchPartner?
}

/// A leaked node of the benchmark: a flow, its context, a worker, a view.
final class LeakyBenchFlow: AbstractFlow<LeakyBenchContext, HeadlessViewController> {
    static func make() -> LeakyBenchFlow {
        LeakyBenchFlow(
            context: LeakyBenchContext(workers: [BenchWorker()]), viewController: HeadlessViewController(title: "Leaky"))
    }
}

/// The retainer analysis in a host of 100,000 live nodes with one leaked object: how long one
/// analysis takes (the target is 50 ms per object, bounded), and how much memory it copies and
/// reads. Two leaks: a holder path (a closure in a long-lived session's array captures the
/// context: the search stops once it is found) and a retain cycle (no root reaches it: the whole
/// reachable heap is searched first, then the cycle).
func runRetainerBenchmarks(quick: Bool) -> [ReportRow] {
    let nodeCount = quick ? 20_000 : 100_000
    let repetitions = quick ? 3 : 7
    let tracker = NodeTracker()
    tracker.startRecording()
    var rows: [ReportRow] = []
    // Threads that wait, as an app's do: each is interrupted for the capture of the stacks.
    let waiting = 16
    let release = DispatchSemaphore(value: 0)
    let started = DispatchGroup()
    for index in 0..<waiting {
        started.enter()
        Thread.detachNewThread {
            Thread.current.name = "bench-waiter-\(index)"
            started.leave()
            release.wait()
        }
    }
    started.wait()
    defer { for _ in 0..<waiting { release.signal() } }
    NodeTracker.$current.withValue(tracker) {
        let root = BenchFlow.make()
        root._start()
        // Building the host is itself a figure: every sub-flow goes under one flow, the widest
        // list a FlowController keeps.
        let buildStart = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<nodeCount { root.attach(starting: BenchFlow.make()) }
        let buildMillis = Double(DispatchTime.now().uptimeNanoseconds - buildStart) / 1e6
        rows.append(
            ReportRow(
                name: "attaching \(nodeCount) sub-flows to one flow (connected tracker, recording)",
                figure: String(format: "%.0f ms, %.2f µs a flow", buildMillis, buildMillis * 1_000 / Double(nodeCount)),
                target: "linear"))

        func leak(_ kind: String) {
            let leaky = LeakyBenchFlow.make()
            root.attach(starting: leaky)
            if kind == "holder" {
                let context = leaky.context
                BenchSession.shared.listeners.append { [context] in _ = context.isActive }
            } else {
                let partner = BenchPartner()
                partner.context = leaky.context
                leaky.context.partner = partner
            }
            root.detach(ending: leaky)
        }

        // Each kind three ways, in turns (the order rotated every turn): in a forked child that
        // reads the memory in place (the default), with a second thread reading the blocks'
        // references ahead of the search (the default) and without; and copied on the calling
        // thread (`NODESCOPE_RETAINER_FORK=0`, or where a fork is refused).
        // And the search kept to the blocks that may lead to the leak (the default), against the
        // search of the whole heap (`Limits.searchesBackwards = false`).
        struct Way: Hashable {
            var inChild: Bool
            var readsAhead: Bool
            var backwards: Bool
            var label: String {
                (inChild ? "in a forked child" : "copied") + (backwards ? "" : ", the whole heap searched")
                    + (readsAhead ? "" : " on one thread")
            }
        }
        let ways = [
            Way(inChild: true, readsAhead: true, backwards: true), Way(inChild: true, readsAhead: true, backwards: false),
            Way(inChild: true, readsAhead: false, backwards: false), Way(inChild: false, readsAhead: true, backwards: true),
        ]
        for kind in ["holder", "cycle"] {
            var times: [Way: [Double]] = [:]
            // The time outside the analysis: the tracker's query (the objects of every node).
            var outside: [Way: [Double]] = [:]
            var last: [Way: (RetainerAnalysis.Statistics, RetainersFrame?)] = [:]
            for repetition in 0..<repetitions {
                for turn in 0..<ways.count {
                    let way = ways[(repetition + turn) % ways.count]
                    var unbounded = RetainerAnalysis.Limits()
                    unbounded.timePerObjectNanos = 60_000_000_000
                    unbounded.timePerBatchNanos = 60_000_000_000
                    unbounded.analyzesInChild = way.inChild
                    unbounded.readsAhead = way.readsAhead ? .whenAProcessorIsFree : .never
                    unbounded.searchesBackwards = way.backwards
                    let analysis = RetainerAnalysis(limits: unbounded)
                    leak(kind)
                    let start = DispatchTime.now().uptimeNanoseconds
                    let frame = tracker.explainLeaks(detachedBy: .max, with: analysis).first { $0.objectIndex == 1 }
                    times[way, default: []].append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
                    outside[way, default: []].append(
                        Double(DispatchTime.now().uptimeNanoseconds - start - analysis.lastRun.elapsedNanos) / 1e6)
                    last[way] = (analysis.lastRun, frame)
                }
            }
            // Turn by turn: one way's time over another's, in the same turn.
            func ratios(_ numerator: Way, _ denominator: Way, _ label: String, target: String) {
                guard let over = times[numerator], let under = times[denominator] else { return }
                let ratios = zip(over, under).dropFirst().map { $0 / $1 }.sorted()
                print("retainers (\(kind)): \(label), turn by turn: " + ratios.map { String(format: "%.2f", $0) }.joined(separator: " "))
                rows.append(
                    ReportRow(
                        name: "retainer analysis, \(kind) leak, \(label) (in a forked child)",
                        figure: String(format: "%.2f× median, turn by turn", ratios[ratios.count / 2]), target: target))
            }
            ratios(ways[0], ways[1], "kept to a scope against the whole heap searched", target: "below 1")
            ratios(ways[1], ways[2], "the whole heap searched: a second thread reading ahead against one thread", target: "below 1")
            for way in ways {
                guard var measured = times[way], let (statistics, frame) = last[way] else { continue }
                let first = measured.removeFirst()
                measured.sort()
                let median = measured[measured.count / 2]
                let path = frame.map { "\($0.verdict): " + $0.hops.map { "\($0.holder) \($0.reference)" }.joined(separator: " → ") }
                print("retainers (\(kind), \(way.label)): \(path ?? "no frame")")
                print(
                    "  last run: \(way.inChild ? "fork" : "copy") \(statistics.copyNanos / 1_000_000) ms, heap walk \(statistics.indexNanos / 1_000_000) ms, "
                        + "search \(statistics.searchNanos / 1_000_000) ms (of which indexing the holders \(statistics.holdersNanos / 1_000_000) ms; "
                        + (statistics.scopeBlocks > 0 ? "kept to \(statistics.scopeBlocks) blocks" : "the whole heap")
                        + "), total \(statistics.elapsedNanos / 1_000_000) ms; "
                        + "\(statistics.blocksReadAhead) of \(statistics.blocksScanned) blocks read ahead; "
                        + String(format: "%d stacks captured in %.2f ms", statistics.stacksCaptured, Double(statistics.captureNanos) / 1e6)
                        + String(
                            format: "; the tracker's query %.1f ms median", (outside[way] ?? [0]).sorted()[(outside[way] ?? [0]).count / 2])
                )
                rows.append(
                    ReportRow(
                        name: "retainer analysis, \(kind) leak, \(nodeCount) live nodes, \(way.label)",
                        figure: String(
                            format: "%.1f ms median (first %.1f ms); copied %d MiB, %d blocks, %d scanned; %d stacks captured in %.2f ms",
                            median, first, statistics.bytesCopied >> 20, statistics.blocks, statistics.blocksScanned,
                            statistics.stacksCaptured, Double(statistics.captureNanos) / 1e6),
                        target: "≤ 50 ms, bounded"))
            }
        }
        // With the default bounds (50 ms per object analyzed, at least 250 ms a call), the same
        // analysis: complete, or cut short at its bound.
        leak("cycle")
        let limits = RetainerAnalysis.Limits()
        let bounded = tracker.explainLeaks(detachedBy: .max, with: RetainerAnalysis(limits: limits))
        let bound = min(limits.timePerBatchNanos, max(limits.leastTimePerBatchNanos, limits.timePerObjectNanos * UInt64(bounded.count)))
        let verdicts = Set(bounded.map { "\($0.verdict)\($0.cutShort ? " (cut short)" : "")" }).sorted().joined(separator: ", ")
        rows.append(
            ReportRow(
                name: "retainer analysis with the default bound, cycle leak (\(bounded.count) objects alive)",
                figure: "\(verdicts), \((bounded.first?.elapsedMicros ?? 0) / 1_000) ms (bound \(bound / 1_000_000) ms)",
                target: "≤ 50 ms per object"))
        withExtendedLifetime(root) {}
    }
    return rows
}
