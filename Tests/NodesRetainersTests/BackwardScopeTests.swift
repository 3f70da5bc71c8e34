import NodesRetainers
import NodescopeWire
import Testing

/// A node of a random graph: references through an array, and through a closure's captures.
final class GraphNode {
    var edges: [GraphNode] = []
    var callback: (() -> Int)?
}

/// SplitMix64: the same graph for the same seed.
private struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension RetainerAnalysisTests {
    /// The search kept to the blocks that may lead to its targets, found backwards from them
    /// (``BackwardScope``, the default), gives every target of a random graph the frame that a
    /// search of the whole heap gives it: the same verdict, the same path from the same holder,
    /// the same suspect (for code in flight, the same verdict: its path runs through the frames
    /// running at that instant). Graphs of 1,500 nodes with references through arrays and closures,
    /// 400 of them attached, 12 detached ones explained one at a time; cycles and shared holders
    /// come as they fall. Three seeds, in a forked child and copied.
    @Test(arguments: [(UInt64(1), true), (2, true), (3, false)])
    func aSearchKeptToTheBlocksThatLeadToTheTargetsFindsWhatTheWholeHeapsFinds(seed: UInt64, inChild: Bool) throws {
        var random = SeededGenerator(state: seed)
        let nodes = (0..<1_500).map { _ in GraphNode() }
        for node in nodes {
            for _ in 0..<Int.random(in: 0...3, using: &random) { node.edges.append(nodes.randomElement(using: &random)!) }
            if Int.random(in: 0..<5, using: &random) == 0 {
                let captured = nodes.randomElement(using: &random)!
                node.callback = { captured.edges.count }
            }
        }
        var positions = Array(nodes.indices).shuffled(using: &random)
        let attachedPositions = positions.prefix(400)
        positions.removeFirst(400)
        let explained = positions.prefix(12)
        let attached = attachedPositions.map { RetainerAnalysis.NodeObject(nodes[$0], nodeID: 10_000 + UInt64($0)) }
        let detached = explained.map { RetainerAnalysis.NodeObject(nodes[$0], nodeID: 20_000 + UInt64($0)) }
        let targets = explained.map { RetainerAnalysis.Target(nodes[$0], nodeID: 20_000 + UInt64($0), objectIndex: 0) }

        // One target an analysis, so that each takes the way it takes: a path from the first
        // phase's roots, a cycle, or a stack (where the scope left out tasks, the search starts
        // again over the whole heap).
        var scoped = 0
        var verdicts: Set<String> = []
        for target in targets {
            var found: [Bool: String] = [:]
            for backwards in [false, true] {
                var limits = RetainerAnalysis.Limits()
                limits.timePerObjectNanos = 60_000_000_000
                limits.timePerBatchNanos = 60_000_000_000
                limits.analyzesInChild = inChild
                limits.searchesBackwards = backwards
                let analysis = RetainerAnalysis(limits: limits)
                let frame = try #require(analysis.explain([target], attached: attached, detached: detached).first)
                #expect(!frame.cutShort, "\(frame.note ?? "")")
                if backwards, analysis.lastRun.scopeBlocks > 0 { scoped += 1 }
                if !backwards { #expect(analysis.lastRun.scopeBlocks == 0) }
                found[backwards] =
                    "\(frame.verdict) from \((frame.hops.first?.holderNodeID).map { String($0) } ?? "-"): "
                    + lines(frame).joined(separator: " → ")
            }
            let whole = try #require(found[false])
            let verdict = String(whole.prefix { $0 != " " })
            if verdict == "stack" {
                // Code in flight: its path runs through the frames of the tasks and threads
                // running at that instant (the other tests' too), which differ from one
                // analysis to the next in a live process. The verdict is what must agree.
                #expect(found[true]?.hasPrefix("stack ") == true, "target \(target.nodeID): \(found[true] ?? "-") against \(whole)")
            } else {
                #expect(found[true] == whole, "target \(target.nodeID)")
            }
            verdicts.insert(verdict)
        }
        // The scope did the work for some, and the frames were of more than one kind.
        #expect(scoped > 0, "\(verdicts)")
        #expect(verdicts.count > 1, "\(verdicts)")
        withExtendedLifetime(nodes) {}
    }
}
