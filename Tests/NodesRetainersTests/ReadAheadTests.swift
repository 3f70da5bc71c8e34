import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

extension RetainerAnalysisTests {
    /// The search with a second thread reading the blocks' references ahead of it finds what it
    /// finds on one thread: the same verdicts, the same paths from the same holders, a leftover
    /// word given way to as before (``HeapGraph/doubtfulWord(of:shape:)``), in a forked child and
    /// copied. Thousands of attached nodes, each with an object of its own, fill the search's
    /// queue enough for the reader to start (``ReadAhead/leastBlocks``); the statistics say it did.
    /// And where the reader stalls (as one that loses its processor), the search gives way and
    /// goes on alone from the block it waited for, finding the same. The search kept to the
    /// blocks that may lead to the targets, found backwards (``BackwardScope``, the default),
    /// finds the same again: a holder path, a cycle, and a real path chosen over a leftover word
    /// that is shorter, which a scope of fewer levels must not take.
    @Test(arguments: [true, false])
    func aSecondThreadReadingAheadFindsWhatOneThreadFinds(inChild: Bool) throws {
        let nodes = (0..<6_000).map { _ in ChainLink() }
        for node in nodes { node.next = CapturedPart() }
        // A holder path from node 4,321: two links.
        let (held, holderLink) = (LeftoverTarget(), ChainLink())
        nodes[4_321].next = holderLink
        holderLink.next = held
        // A cycle of two links that no root reaches.
        let (cycleHead, cycleBack) = (ChainLink(), ChainLink())
        (cycleHead.next, cycleBack.next) = (cycleBack, cycleHead)
        // A leftover word in a closure's context that a node keeps, and a real path, longer.
        let (first, second) = (CapturedPart(), CapturedPart())
        let (slot, context) = try Self.slot { { [first, second] in first.count += second.count } }
        let leftover = LeftoverTarget()
        context.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(leftover).toOpaque()), toByteOffset: 32, as: UInt.self)
        let (head, middle, last) = (ChainLink(), ChainLink(), ChainLink())
        (head.next, middle.next, last.next) = (middle, last, leftover)

        let targets = [
            RetainerAnalysis.Target(held, nodeID: 1, objectIndex: 0),
            RetainerAnalysis.Target(cycleHead, nodeID: 2, objectIndex: 0),
            RetainerAnalysis.Target(leftover, nodeID: 3, objectIndex: 0),
        ]
        let attached =
            nodes.enumerated().map { RetainerAnalysis.NodeObject($1, nodeID: 100 + UInt64($0)) } + [
                RetainerAnalysis.NodeObject(slot, nodeID: 30), RetainerAnalysis.NodeObject(head, nodeID: 31),
            ]
        let detached = [RetainerAnalysis.NodeObject(cycleBack, nodeID: 2)]
        var found: [String: [String]] = [:]
        // Whatever the load of the machine that runs the tests: always, or never.
        let ways: [(name: String, way: RetainerAnalysis.ReadingAhead)] = [
            ("reading ahead", .always), ("stalling", .stallingAfter(blocks: 1_000)), ("one thread", .never),
            ("kept to a scope", .always),
        ]
        for (name, way) in ways {
            var limits = RetainerAnalysis.Limits()
            limits.timePerObjectNanos = 60_000_000_000
            limits.timePerBatchNanos = 60_000_000_000
            limits.analyzesInChild = inChild
            limits.readsAhead = way
            limits.searchesBackwards = name == "kept to a scope"
            let analysis = RetainerAnalysis(limits: limits)
            let frames = analysis.explain(targets, attached: attached, detached: detached)
            #expect(frames.count == 3)
            let run = analysis.lastRun
            if limits.searchesBackwards {
                // Kept to a scope: the search does not enter the thousands of attached nodes that
                // lead to no target, and reads none ahead. How large the scope grows depends on the
                // other tests beside this one: a stale word in one of their structures can bring
                // it in (a loaded run met a scope of 3,502 blocks, of which the search entered
                // 238), or make it too large, and then the whole heap is searched, which must find
                // the same all the same.
                if run.scopeBlocks > 0 {
                    #expect(run.blocksScanned < nodes.count, "\(run)")
                    #expect(run.blocksReadAhead == 0, "\(run)")
                }
            } else {
                #expect(run.scopeBlocks == 0, "\(run)")
            }
            switch way {
            case _ where limits.searchesBackwards: break
            case .always: #expect(run.blocksReadAhead >= nodes.count, "\(run)")
            case .stallingAfter:
                // Read ahead until the stall (what was not handed over yet is read again), then alone.
                #expect(run.blocksReadAhead > 0 && run.blocksReadAhead <= 1_000, "\(run)")
                #expect(run.blocksScanned >= nodes.count, "\(run)")
            default: #expect(run.blocksReadAhead == 0, "\(run)")
            }
            found[name] = frames.sorted { $0.nodeID < $1.nodeID }.map { frame in
                "\(frame.nodeID) \(frame.verdict) from \((frame.hops.first?.holderNodeID).map { String($0) } ?? "-"): "
                    + lines(frame).joined(separator: " → ")
            }
        }
        let one = try #require(found["one thread"])
        #expect(
            one == [
                "1 holder from 4421: ChainLink .next → ChainLink .next *",
                "2 cycle from 2: ChainLink .next * → ChainLink .next",
                "3 holder from 31: ChainLink .next → ChainLink .next → ChainLink .next *",
            ], "\(one)")
        #expect(found["reading ahead"] == one)
        #expect(found["stalling"] == one)
        #expect(found["kept to a scope"] == one)
        withExtendedLifetime((nodes, held, holderLink, cycleHead, cycleBack, slot, leftover, head, middle, last, first, second)) {}
    }
}
