import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Resolving a pid or a process name to a session")
struct ResolveTests {
    static func open(_ collector: inout Collector, pid: UInt32, name: String, at now: UInt64) -> SessionID {
        collector.openStreamingSession(pid: pid, name: name, at: now)
    }

    @Test func byPid() {
        var collector = Collector()
        let app = Self.open(&collector, pid: 4242, name: "sample-nodes", at: 1)
        let other = Self.open(&collector, pid: 77, name: "other", at: 2)
        #expect(collector.resolve("4242") == .success(app))
        #expect(collector.resolve("77") == .success(other))
    }

    @Test func pidPrefersTheLiveSession() {
        var collector = Collector()
        let first = Self.open(&collector, pid: 10, name: "app", at: 1)
        _ = collector.endSession(first, normally: false, now: 2)
        let second = Self.open(&collector, pid: 10, name: "app", at: 3)
        #expect(collector.resolve("10") == .success(second))
        _ = collector.endSession(second, normally: true, now: 4)
        #expect(collector.resolve("10") == .success(second))
    }

    @Test func byExactNameThenUniquePrefix() {
        var collector = Collector()
        let short = Self.open(&collector, pid: 1, name: "demo", at: 1)
        let long = Self.open(&collector, pid: 2, name: "demo-server", at: 2)
        let sample = Self.open(&collector, pid: 3, name: "sample-nodes", at: 3)
        #expect(collector.resolve("demo") == .success(short))
        #expect(collector.resolve("demo-s") == .success(long))
        #expect(collector.resolve("sam") == .success(sample))
    }

    @Test func ambiguousNamesListTheCandidates() {
        var collector = Collector()
        _ = Self.open(&collector, pid: 1, name: "worker-a", at: 1)
        _ = Self.open(&collector, pid: 2, name: "worker-b", at: 2)
        _ = Self.open(&collector, pid: 3, name: "twin", at: 3)
        _ = Self.open(&collector, pid: 4, name: "twin", at: 4)
        guard case .failure(.ambiguous(let candidates)) = collector.resolve("worker") else {
            Issue.record("expected ambiguous")
            return
        }
        #expect(candidates.map(\.pid) == [1, 2])
        let message = ResolveError.ambiguous(candidates).description
        #expect(message.contains("1 (worker-a)") && message.contains("2 (worker-b)"))
        guard case .failure(.ambiguous(let twins)) = collector.resolve("twin") else {
            Issue.record("expected ambiguous")
            return
        }
        #expect(twins.map(\.pid) == [3, 4])
    }

    @Test func endedSessionsAreFoundWhenNoLiveOneMatches() {
        var collector = Collector()
        let run1 = Self.open(&collector, pid: 1, name: "tests", at: 1)
        _ = collector.endSession(run1, normally: true, now: 2)
        let run2 = Self.open(&collector, pid: 2, name: "tests", at: 3)
        _ = collector.endSession(run2, normally: true, now: 4)
        #expect(collector.resolve("tests") == .success(run2))
        let live = Self.open(&collector, pid: 3, name: "tests", at: 5)
        #expect(collector.resolve("tests") == .success(live))
    }

    @Test func notFound() {
        var collector = Collector()
        _ = Self.open(&collector, pid: 1, name: "demo", at: 1)
        #expect(collector.resolve("nothing") == .failure(.notFound("nothing")))
        #expect(collector.resolve("999") == .failure(.notFound("999")))
        #expect(ResolveError.notFound("x").description.contains("\"x\""))
    }

    @Test func digitsThatAreNoPidAreTriedAsAName() {
        var collector = Collector()
        let numbered = Self.open(&collector, pid: 5, name: "2048", at: 1)
        #expect(collector.resolve("2048") == .success(numbered))
    }
}

/// `TreeView.node(atPath:)`: a tree read from a file resolves a path as the collector does.
@Suite struct TreeViewPathTests {
    private func node(_ id: UInt64, _ parent: UInt64?, _ name: String, kind: String = "Flow", status: NodeStatus = .active) -> NodeInfo {
        NodeInfo(
            id: id, parent: parent, kind: kind, name: name, status: status, objects: [], attachedAtNanos: 0,
            detachedAtNanos: nil, depth: 0, isPlaceholder: false)
    }

    @Test func pathsFromARootByKindAndByTheirLastNamesAndLiveOnesFirst() {
        let view = TreeView(
            session: SessionID(rawValue: 1), pid: 1, processName: "p",
            nodes: [
                node(1, nil, "AppFlow"), node(2, 1, "LoggedInFlow"), node(3, 2, "FeedFlow", status: .lateRelease),
                node(4, 2, "FeedFlow"), node(5, 2, "", kind: "Settings"),
            ])
        #expect(view.node(atPath: "AppFlow/LoggedInFlow")?.id == 2)
        #expect(view.node(atPath: "AppFlow/LoggedInFlow/FeedFlow")?.id == 4, "the attached one of two")
        #expect(view.node(atPath: "LoggedInFlow/FeedFlow")?.id == 4, "the last names of a path match anywhere")
        #expect(view.node(atPath: "Settings")?.id == 5, "a kind stands for a node without a name")
        #expect(view.node(atPath: "no/such") == nil)
        #expect(view.node(atPath: "") == nil)
    }
}
