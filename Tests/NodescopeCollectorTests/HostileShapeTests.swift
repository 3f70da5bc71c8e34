import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Hostile tree shapes")
struct HostileShapeTests {
    /// A chain thousands of nodes deep, every node leaked: each leak record's path is bounded, so
    /// flagging them all stays linear instead of quadratic in the depth.
    @Test func leakPathsOfAVeryDeepChainAreBounded() throws {
        var harness = Harness()
        let depth: UInt64 = 5_000
        for id in 1...depth {
            try harness.attach(id, parent: id - 1, kind: "Flow", name: "N\(id)")
        }
        for id in (1...depth).reversed() { try harness.detach(id) }
        harness.wait(2 * Harness.second)
        let flagged = harness.advance(to: harness.now)
        let records = flagged.compactMap { change -> LeakRecord? in
            if case .leakFlagged(let record) = change { record } else { nil }
        }
        #expect(records.count == Int(depth))
        #expect(records.allSatisfy { $0.path.count <= 65 })
        let deepest = try #require(records.first { $0.nodeID == depth })
        #expect(deepest.path.first == "…")
        #expect(deepest.path.last == "N\(depth)")
        let shallow = try #require(records.first { $0.nodeID == 3 })
        #expect(shallow.path == ["N1", "N2", "N3"])
    }
}
