import NodesDebug
import Testing

@testable import NodesTracking

@Suite("NodeRegistry: the tracker's rules without locks or clocks")
struct NodeRegistryTests {
    final class Object {}

    @Test func keepsDetachedNodeUntilEveryObjectIsReleased() {
        var registry = NodeRegistry()
        let root = NodeID(rawValue: 1)
        _ = registry.attach(root, parent: nil, kind: .flow, name: "Root", time: 10, principal: nil)
        #expect(registry.addObject(to: root, role: .flow, typeName: "RootFlow", weak: nil, address: .unknown) == 0)
        #expect(registry.addObject(to: root, role: .context, typeName: "RootContext", weak: nil, address: .unknown) == 1)

        #expect(registry.detach(root, time: 20) == [root])
        #expect(registry.contains(root))
        #expect(registry.release(root, index: 0)?.role == .flow)
        #expect(registry.contains(root))
        #expect(registry.release(root, index: 1)?.typeName == "RootContext")
        #expect(!registry.contains(root))
    }

    /// A release that ends a descriptor's last use, at a moment when the descriptor table is due
    /// to sweep (over 1,024 descriptors, nearly all unused), still reads the released
    /// object's names: the sweep waits for the next attach or added object.
    @Test func theLastReleaseOfADescriptorStillNamesItWhenASweepIsDue() {
        var registry = NodeRegistry()
        let count: UInt64 = 2_100
        for raw in 1...count {
            let node = NodeID(rawValue: raw)
            _ = registry.attach(node, parent: nil, kind: .flow, name: "N\(raw)", time: 0, principal: nil)
            _ = registry.addObject(to: node, role: .flow, typeName: "Type\(raw)", weak: nil, address: .unknown)
            _ = registry.detach(node, time: 1)
        }
        for raw in 1...count {
            let names = registry.release(NodeID(rawValue: raw), index: 0)
            #expect(names?.typeName == "Type\(raw)" && names?.role == .flow)
        }
        #expect(registry.count == 0)
        // The next attach sweeps, and the table starts reusing ids: names stay right.
        let again = NodeID(rawValue: count + 1)
        _ = registry.attach(again, parent: nil, kind: .flow, name: "Again", time: 2, principal: nil)
        #expect(registry.addObject(to: again, role: .context, typeName: "Fresh", weak: nil, address: .unknown) == 0)
        #expect(registry.release(again, index: 0)?.typeName == "Fresh")
    }

    /// Names made at run time do not pile up: a churn of nodes of distinct names and types keeps
    /// the descriptor tables within twice what the records use (and 1,024), while the names of
    /// nodes and objects that stay, kept or released, read right after every sweep.
    @Test func aChurnOfDistinctNamesIsSweptAndTheNamesThatStayReadRight() {
        var registry = NodeRegistry()
        let kept = (1...20).map { NodeID(rawValue: $0) }
        for node in kept {
            _ = registry.attach(node, parent: nil, kind: .flow, name: "Kept\(node.rawValue)", time: 0, principal: nil)
            _ = registry.addObject(to: node, role: .flow, typeName: "KeptFlow\(node.rawValue)", weak: nil, address: .unknown)
            _ = registry.addObject(to: node, role: .context, typeName: "KeptContext\(node.rawValue)", weak: nil, address: .unknown)
        }
        // Half the kept nodes are detached with one object released: their records stay, and
        // so must the released object's names.
        for node in kept.prefix(10) {
            _ = registry.detach(node, time: 1)
            _ = registry.release(node, index: 1)
        }
        var mostKept = (nodes: 0, objects: 0)
        for raw in UInt64(1_000)..<UInt64(9_000) {
            let node = NodeID(rawValue: raw)
            _ = registry.attach(node, parent: nil, kind: .flow, name: "Churn\(raw)", time: 2, principal: nil)
            _ = registry.addObject(to: node, role: .flow, typeName: "ChurnType\(raw)", weak: nil, address: .unknown)
            _ = registry.detach(node, time: 3)
            #expect(registry.release(node, index: 0)?.typeName == "ChurnType\(raw)")
            let counts = registry.descriptorCounts
            mostKept = (max(mostKept.nodes, counts.nodes), max(mostKept.objects, counts.objects))
        }
        #expect(registry.descriptorEpoch.nodeSweeps >= 3 && registry.descriptorEpoch.objectSweeps >= 3)
        #expect(mostKept.nodes <= 1_025 && mostKept.objects <= 1_025, "\(mostKept)")
        let snapshot = registry.snapshotNodes()
        #expect(snapshot.map(\.id) == kept)
        for node in snapshot {
            #expect(node.name == "Kept\(node.id.rawValue)")
            #expect(node.objects.map(\.typeName) == ["KeptFlow\(node.id.rawValue)", "KeptContext\(node.id.rawValue)"])
            #expect(node.objects.map(\.role) == [.flow, .context])
            #expect(node.objects.map(\.isAlive) == [true, node.id.rawValue > 10])
        }
    }

    @Test func releaseIsReportedOnceAndUnknownIndicesAreIgnored() {
        var registry = NodeRegistry()
        let node = NodeID(rawValue: 7)
        _ = registry.attach(node, parent: nil, kind: .flow, name: "A", time: 0, principal: nil)
        _ = registry.addObject(to: node, role: .flow, typeName: "A", weak: nil, address: .unknown)
        #expect(registry.release(node, index: 0) != nil)
        #expect(registry.release(node, index: 0) == nil)
        #expect(registry.release(node, index: 9) == nil)
        #expect(registry.release(NodeID(rawValue: 99), index: 0) == nil)
    }

    @Test func detachingAParentDetachesAttachedDescendantsDeepestFirst() {
        var registry = NodeRegistry()
        let (a, b, c, d) = (NodeID(rawValue: 1), NodeID(rawValue: 2), NodeID(rawValue: 3), NodeID(rawValue: 4))
        _ = registry.attach(a, parent: nil, kind: .router, name: "A", time: 0, principal: nil)
        _ = registry.attach(b, parent: a, kind: .router, name: "B", time: 0, principal: nil)
        _ = registry.attach(c, parent: b, kind: .router, name: "C", time: 0, principal: nil)
        _ = registry.attach(d, parent: a, kind: .router, name: "D", time: 0, principal: nil)
        for node in [a, b, c, d] { _ = registry.addObject(to: node, role: .router, typeName: "R", weak: nil, address: .unknown) }
        #expect(registry.detach(a, time: 5) == [d, c, b, a])
        #expect(registry.detach(a, time: 6) == [])
    }

    @Test func weakWatchedObjectsOfDetachedNodesArePolled() {
        var registry = NodeRegistry()
        let node = NodeID(rawValue: 3)
        var object: Object? = Object()
        _ = registry.attach(node, parent: nil, kind: .module, name: "M", time: 0, principal: nil)
        _ = registry.addObject(to: node, role: .module, typeName: "Object", weak: WeakReference(object!), address: .unknown)
        #expect(registry.pendingReferences().isEmpty, "nothing is polled while the node is attached")
        _ = registry.detach(node, time: 1)
        #expect(registry.pendingReferences().map { $0.reference?.isReleased } == [false])
        #expect(registry.pending.count == 1)
        // A poll at 5 finds it alive; one at 9 finds it gone: it is stamped released at 5, the
        // last time it was known alive, never at the time the poll noticed.
        #expect(registry.applyDeallocated([], pollStart: 5).isEmpty)
        object = nil
        let deallocated = registry.pendingReferences().filter { $0.reference?.isReleased ?? true }.map(\.entry)
        let gone = registry.applyDeallocated(deallocated, pollStart: 9)
        #expect(gone.map(\.index) == [0])
        #expect(gone.map(\.time) == [5])
        #expect(registry.pending.isEmpty)
        #expect(!registry.contains(node))
        _ = object
    }

    @Test func aReleasedAncestorStaysWhileAGhostHangsBelowItThenGoesWithIt() {
        var registry = NodeRegistry()
        let (grandparent, parent, child) = (NodeID(rawValue: 1), NodeID(rawValue: 2), NodeID(rawValue: 3))
        _ = registry.attach(grandparent, parent: nil, kind: .flow, name: "G", time: 0, principal: nil)
        _ = registry.attach(parent, parent: grandparent, kind: .flow, name: "P", time: 0, principal: nil)
        _ = registry.attach(child, parent: parent, kind: .flow, name: "C", time: 0, principal: nil)
        for node in [grandparent, parent, child] {
            _ = registry.addObject(to: node, role: .flow, typeName: "F", weak: nil, address: .unknown)
        }
        _ = registry.detach(grandparent, time: 1)
        _ = registry.release(grandparent, index: 0)
        _ = registry.release(parent, index: 0)
        // The child leaks: its released ancestors stay, so its whole path can be told.
        #expect(registry.snapshotNodes().map(\.name) == ["G", "P", "C"])
        #expect(registry.snapshotNodes().map { $0.objects.contains(where: \.isAlive) } == [false, false, true])
        _ = registry.release(child, index: 0)
        #expect(registry.count == 0)
    }

    @Test func aReleasedAncestorKeptForAGhostTakesNoNewObjectAndAwaitsNothing() {
        var registry = NodeRegistry()
        let (parent, child) = (NodeID(rawValue: 1), NodeID(rawValue: 2))
        _ = registry.attach(parent, parent: nil, kind: .flow, name: "P", time: 0, principal: nil)
        _ = registry.addObject(to: parent, role: .flow, typeName: "P", weak: nil, address: .unknown)
        _ = registry.attach(child, parent: parent, kind: .flow, name: "C", time: 0, principal: nil)
        _ = registry.addObject(to: child, role: .flow, typeName: "C", weak: nil, address: .unknown)
        _ = registry.detach(parent, time: 5)
        _ = registry.release(parent, index: 0)
        // Kept to name the leaked child's path, but released: judged, nothing more to watch.
        #expect(registry.contains(parent))
        #expect(registry.addObject(to: parent, role: .worker, typeName: "W", weak: nil, address: .unknown) == nil)
        #expect(registry.detachedAlive().map(\.node) == [child])
        // A detached node with an object alive still takes one watched late.
        #expect(registry.addObject(to: child, role: .worker, typeName: "W", weak: nil, address: .unknown) == 1)
    }
}
