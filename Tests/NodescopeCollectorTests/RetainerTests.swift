import Foundation
import NodescopeCollector
import NodescopeWire
import Testing

/// Retainer paths (protocol version 2): the `retainers` frame on nodes and leak records.
@Suite("Retainer paths on nodes and leak records")
struct RetainerTests {
    let second = Harness.second

    /// The context of a node held through a listener closure of a session.
    static func listenerFrame(node: UInt64, object: UInt16 = 1, index: Int = 3) -> RetainersFrame {
        RetainersFrame(
            nodeID: node, objectIndex: object, verdict: .holder, elapsedMicros: 1_200,
            hops: [
                RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".component"),
                RetainerHop(holderKind: .object, holder: "AppComponent", reference: ".shared[\"session\"]"),
                RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[\(index)]", isSuspect: true),
                RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
    }

    static func globalFrame(node: UInt64, object: UInt16, name: String = "main.app") -> RetainersFrame {
        RetainersFrame(
            nodeID: node, objectIndex: object, verdict: .global, hops: [RetainerHop(holderKind: .global, holder: name, reference: "")])
    }

    /// A root (1) with a child (2) of a flow and a context, the child detached.
    static func detachedChild() throws -> Harness {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "ProfileFlow", objects: ["flow", "context"])
        try host.release(2, 0)
        try host.detach(2)
        return host
    }

    @Test func aPathForANodeAwaitingReleaseShowsOnItsNodeAndThenOnItsRecord() throws {
        var host = try Self.detachedChild()
        let frame = Self.listenerFrame(node: 2)
        let path = RetainerPath(frame)
        #expect(try host.send([.retainers(frame)]) == [.retainersFound(id: 2, path: path, record: nil)])
        #expect(host.status(2) == .detached)
        #expect(host.node(2)?.retainers == [path])
        #expect(host.node(1)?.retainers == nil, "an attached node has none")
        #expect(path.hops.first?.holderNodeID == 1)
        #expect(path.hops.last?.holderNodeID == nil, "0 on the wire: no node")
        #expect(path.suspectIndex == 2)

        host.advance(to: host.now + second)
        let record = try #require(host.leaks.first)
        #expect(record.retainers == [path])
        #expect(record.fingerprint != LeakFingerprint.fingerprint(path: record.path, aliveRoles: ["context"]))
        #expect(
            record.fingerprint
                == LeakFingerprint.fingerprint(path: ["AppFlow", "ProfileFlow"], aliveObjects: record.aliveObjects, retainers: [path]))
        #expect(host.node(2)?.retainers == [path], "the ghost keeps its path")
    }

    @Test func aPathAfterTheFlagUpdatesTheRecordAndItsFingerprint() throws {
        var host = try Self.detachedChild()
        host.advance(to: host.now + second)
        let flagged = try #require(host.leaks.first)
        #expect(flagged.retainers.isEmpty)
        #expect(flagged.fingerprint == LeakFingerprint.fingerprint(path: ["AppFlow", "ProfileFlow"], aliveRoles: ["context"]))

        let changes = try host.send([.retainers(Self.listenerFrame(node: 2))])
        guard case .retainersFound(2, let path, let record?)? = changes.first, changes.count == 1 else {
            Issue.record("expected one retainersFound with the record, got \(changes)")
            return
        }
        #expect(record.retainers == [path])
        #expect(record.fingerprint != flagged.fingerprint)
        #expect(host.leaks == [record], "the listed record is the updated one")

        // A second result for the same object replaces the first.
        var better = Self.listenerFrame(node: 2)
        better.hops.removeFirst()
        try host.send([.retainers(better)])
        #expect(host.leaks.first?.retainers == [RetainerPath(better)])
    }

    @Test func aLateReleaseKeepsItsPathsAndAResyncKeepsThoseOfNodesStillThere() throws {
        var host = try Self.detachedChild()
        try host.send([.retainers(Self.listenerFrame(node: 2))])
        host.advance(to: host.now + second)
        try host.release(2, 1)
        #expect(host.leaks.first?.verdict == .lateRelease)
        #expect(host.leaks.first?.retainers.count == 1)

        var other = try Self.detachedChild()
        try other.send([.retainers(Self.listenerFrame(node: 2))])
        // A snapshot that still holds node 2, detached with its context alive.
        var script = other.script
        var frames = script.beginSnapshot(nodeCount: 2, sequence: script.sequence)
        frames += script.attach(1, kind: "AppFlow", at: other.hostNow)
        frames += script.attach(2, parent: 1, kind: "ProfileFlow", at: other.hostNow)
        frames += script.addObject(2, index: 0, role: "flow", type: "ProfileFlow.flow", at: other.hostNow)
        frames += script.addObject(2, index: 1, role: "context", type: "ProfileFlow.context", at: other.hostNow)
        frames += script.release(2, index: 0, at: other.hostNow)
        frames += script.detach(2, at: other.hostNow)
        frames += script.endSnapshot()
        try other.send(frames)
        #expect(other.node(2)?.retainers?.count == 1)
        // One that no longer holds it: the node was released in the gap, and its path is gone.
        frames = script.beginSnapshot(nodeCount: 1, sequence: script.sequence)
        frames += script.attach(1, kind: "AppFlow", at: other.hostNow)
        frames += script.endSnapshot()
        try other.send(frames)
        #expect(other.node(2) == nil)
    }

    @Test func framesAboutUnknownNodesAndObjectsAreViolationsAsForOtherFrames() throws {
        var host = try Self.detachedChild()
        #expect(throws: SessionError(.unknownNode, "retainers names node 99, which was never attached")) {
            try host.send([.retainers(Self.listenerFrame(node: 99))])
        }
        #expect(throws: SessionError(.unknownObject, "retainers names object 7 of node 2, never added")) {
            try host.send([.retainers(Self.listenerFrame(node: 2, object: 7))])
        }
        // Inside a snapshot.
        var script = host.script
        try host.send(script.beginSnapshot(nodeCount: 0, sequence: script.sequence))
        #expect(throws: SessionError.self) { try host.send([.retainers(Self.listenerFrame(node: 2))]) }
    }

    @Test func framesThatChangeNothing() throws {
        var host = try Self.detachedChild()
        // An attached node: an analysis only explains a detached node.
        #expect(try host.send([.retainers(Self.listenerFrame(node: 1, object: 0))]).isEmpty)
        #expect(host.node(1)?.retainers == nil)
        // A node removed as released within its grace.
        try host.attach(3, parent: 1, kind: "Gone", objects: ["flow"])
        try host.detach(3)
        try host.release(3, 0)
        #expect(host.node(3) == nil)
        #expect(try host.send([.retainers(Self.listenerFrame(node: 3, object: 0))]).isEmpty)
        // Between dropped and its snapshot: unknown nodes and objects are not violations.
        try host.send([.dropped(count: 2)])
        #expect(try host.send([.retainers(Self.listenerFrame(node: 42))]).isEmpty)
        #expect(try host.send([.retainers(Self.listenerFrame(node: 2, object: 9))]).isEmpty)
        #expect(try host.send([.retainers(Self.listenerFrame(node: 2))]).count == 1, "a known detached node keeps its path")
        #expect(host.node(2)?.retainers?.count == 1)
    }

    @Test func aSessionKeepsOnlyAsManyPathsAsItsBound() throws {
        var host = Harness(settings: CollectorSettings(maxRetainerPathsPerSession: 1))
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "ProfileFlow", objects: ["flow", "context"])
        try host.detach(2)
        #expect(try host.send([.retainers(Self.listenerFrame(node: 2, object: 1))]).count == 1)
        #expect(try host.send([.retainers(Self.listenerFrame(node: 2, object: 0))]).isEmpty)
        #expect(host.node(2)?.retainers?.map(\.objectIndex) == [1])

        var bytes = Harness(settings: CollectorSettings(maxRetainerBytesPerSession: 100))
        try bytes.attach(1, kind: "AppFlow")
        try bytes.attach(2, parent: 1, kind: "ProfileFlow", objects: ["flow", "context"])
        try bytes.detach(2)
        #expect(try bytes.send([.retainers(Self.listenerFrame(node: 2))]).isEmpty, "about 300 bytes of names")
    }

    @Test func aLeakHeldOnlyByGlobalsSaysSo() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "SettingsFlow", objects: ["flow", "context"])
        try host.detach(2)
        try host.send([.retainers(Self.globalFrame(node: 2, object: 0))])
        host.advance(to: host.now + second)
        var record = try #require(host.leaks.first)
        #expect(!record.isRetainedOnlyByGlobals, "the context has no path yet")
        try host.send([.retainers(Self.globalFrame(node: 2, object: 1, name: "main.settings"))])
        record = try #require(host.leaks.first)
        #expect(record.isRetainedOnlyByGlobals)
        #expect(record.retainers.map(\.globalName) == ["main.app", "main.settings"])
        // One object held otherwise: not only globals.
        record.retainers[1] = RetainerPath(Self.listenerFrame(node: 2))
        #expect(!record.isRetainedOnlyByGlobals)
    }

    @Test func everyVerdictAndHolderKindComesAcross() {
        for verdict in RetainerVerdict.allCases {
            let path = RetainerPath(RetainersFrame(nodeID: 1, objectIndex: 0, verdict: verdict))
            #expect(path.verdict.rawValue == "\(verdict)")
        }
        for kind in RetainerHolderKind.allCases {
            let frame = RetainersFrame(
                nodeID: 1, objectIndex: 0, verdict: .holder, hops: [RetainerHop(holderKind: kind, holder: "h", reference: "r")])
            #expect(RetainerPath(frame).hops[0].holderKind.rawValue == "\(kind)")
        }
        let cut = RetainerPath(RetainersFrame(nodeID: 1, objectIndex: 4, verdict: .cycle, cutShort: true, elapsedMicros: 9, note: "n"))
        #expect(cut == RetainerPath(objectIndex: 4, verdict: .cycle, cutShort: true, note: "n", elapsedMicros: 9))
    }

    @Test func recordsAndNodesInJSON() throws {
        let path = RetainerPath(Self.listenerFrame(node: 2))
        let record = LeakRecord(
            session: SessionID(rawValue: 1), pid: 1, processName: "p", nodeID: 2, kind: "Flow", path: ["A"],
            aliveObjects: [ObjectInfo(index: 1, role: "context", typeName: "C", isAlive: true)], detachedAtNanos: 1,
            flaggedAtNanos: 2, releasedAtNanos: nil, verdict: .leaked, fingerprint: "0123456789abcdef", retainers: [path])
        let data = try JSONEncoder().encode(record)
        #expect(try JSONDecoder().decode(LeakRecord.self, from: data) == record)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"holderKind\":\"attachedNodeObject\""))
        #expect(text.contains("\"isSuspect\":true"))

        // A record from a collector of version 1 has no `retainers`.
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        object["retainers"] = nil
        let old = try JSONSerialization.data(withJSONObject: object)
        #expect(try JSONDecoder().decode(LeakRecord.self, from: old).retainers == [])

        // A node without paths has no `retainers` key.
        let node = NodeInfo(
            id: 1, parent: nil, kind: "K", name: "", status: .active, objects: [], attachedAtNanos: 0, detachedAtNanos: nil,
            depth: 0)
        #expect(!String(decoding: try JSONEncoder().encode(node), as: UTF8.self).contains("retainers"))
        let change = TreeChange.retainersFound(id: 2, path: path, record: nil)
        #expect(try JSONDecoder().decode(TreeChange.self, from: JSONEncoder().encode(change)) == change)
    }
}
