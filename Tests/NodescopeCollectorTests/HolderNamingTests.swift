import NodescopeCollector
import NodescopeWire
import Testing

/// A holder that is an object of another node is named by that node's path, with which
/// occurrence of a name it is, so that a person can tell it from the leaked node (issue 31,
/// point 6: the second login's worker holding the first login's).
@Suite("Holders named by their node's path and occurrence")
struct HolderNamingTests {
    /// AppFlow (1) › LoggedInFlow (2) › SettingsFlow (3, detached), then a second login:
    /// AppFlow › LoggedInFlow (4) › SettingsFlow (5, attached).
    static func relogin() throws -> Harness {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "LoggedInFlow")
        try host.attach(3, parent: 2, kind: "SettingsFlow", objects: ["flow", "worker"])
        try host.detach(3)
        try host.detach(2)
        try host.attach(4, parent: 1, kind: "LoggedInFlow")
        try host.attach(5, parent: 4, kind: "SettingsFlow", objects: ["flow", "worker"])
        return host
    }

    @Test func aHolderOfTheHeldObjectsTypeIsNamedByItsNodesPath() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "SyncFlow", objects: ["flow", "worker"])
        try host.attach(3, parent: 1, kind: "OtherFlow", objects: ["flow", "worker"])
        try host.detach(2)
        // Harness objects are typed `kind.role`: the holder names the held object's type.
        let frame = RetainersFrame(
            nodeID: 2, objectIndex: 1, verdict: .holder,
            hops: [RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 3, holder: "SyncFlow.worker", reference: ".peer")])
        let changes = try host.send([.retainers(frame)])
        guard case .retainersFound(2, let path, _)? = changes.first else {
            Issue.record("expected retainersFound, got \(changes)")
            return
        }
        #expect(path.hops[0].holderNodePath == ["AppFlow", "OtherFlow"])
    }

    @Test func theHolderOfTheSameTypeIsNamedByItsNodesPathAndOccurrence() throws {
        var host = try Self.relogin()
        let frame = RetainersFrame(
            nodeID: 3, objectIndex: 1, verdict: .holder,
            hops: [
                RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 5, holder: "SettingsSyncWorker", reference: ".ticker"),
                RetainerHop(holderKind: .object, holder: "Ticker", reference: ".timers[0]", isSuspect: true),
                RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
                RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 3, holder: "SettingsContextImp", reference: ".worker"),
            ])
        let changes = try host.send([.retainers(frame)])
        guard case .retainersFound(3, let path, _)? = changes.first else {
            Issue.record("expected retainersFound, got \(changes)")
            return
        }
        // The rule of `diff` (issue 31 review, point 4): the attached login plainly, the
        // detached one as the second occurrence.
        #expect(path.hops[0].holderNodePath == ["AppFlow", "LoggedInFlow", "SettingsFlow"])
        #expect(path.hops[3].holderNodePath == ["AppFlow", "LoggedInFlow#1", "SettingsFlow"])
        #expect(path.hops[1].holderNodePath == nil, "not a node's object")
        // Shown, not compared: the path equals what the host said, and the fingerprint ignores it.
        #expect(path == RetainerPath(frame))
        #expect(host.node(3)?.retainers?.first?.hops[0].holderNodePath == ["AppFlow", "LoggedInFlow", "SettingsFlow"])
    }

    @Test func aHolderThatIsPlainlyAnotherNodeIsNotRenamed() throws {
        var host = Harness()
        try host.attach(1, kind: "AppFlow")
        try host.attach(2, parent: 1, kind: "ProfileFlow", objects: ["flow", "context"])
        try host.detach(2)
        let frame = RetainersFrame(
            nodeID: 2, objectIndex: 1, verdict: .holder,
            hops: [RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".child")])
        let changes = try host.send([.retainers(frame)])
        guard case .retainersFound(2, let path, _)? = changes.first else {
            Issue.record("expected retainersFound, got \(changes)")
            return
        }
        // Another type, and no namesake on its node's path: its type is enough.
        #expect(path.hops[0].holderNodePath == nil)
    }

    /// One occurrence rule for holder paths and `diff` (issue 31 review, point 4): attached
    /// siblings of a name first, in attach order, the first unsuffixed, then the others.
    @Test func occurrencesCountAttachedSiblingsFirstAndTheFirstIsUnsuffixed() {
        let numbers = NameOccurrence.numbers(
            keys: ["LoggedInFlow", "LoggedInFlow", "Other", "LoggedInFlow", "LoggedInFlow"],
            attached: [false, true, false, false, true])
        #expect(numbers == [2, 0, 0, 3, 1])
        #expect(zip(["A", "A", "A"], [0, 1, 2]).map(NameOccurrence.suffixed) == ["A", "A#1", "A#2"])
    }
}
