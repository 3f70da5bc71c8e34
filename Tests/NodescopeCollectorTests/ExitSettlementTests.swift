import NodescopeCollector
import NodescopeWire
import Testing

/// A node still awaiting release when its host ends normally is settled by what its host's
/// analysis at exit found (docs/PROTOCOL.md, section 7): held statically (a retain cycle no
/// root reaches, a global, plain heap references from them) → leaked; anything that could let
/// go within the grace (a stack, a task, an attached node) → unverified.
@Suite("Verdicts settled at a normal exit")
struct ExitSettlementTests {
    static func cycleFrame(node: UInt64, object: UInt16 = 1, cutShort: Bool = false) -> RetainersFrame {
        RetainersFrame(
            nodeID: node, objectIndex: object, verdict: .cycle, cutShort: cutShort,
            hops: [
                RetainerHop(holderKind: .detachedNodeObject, holderNodeID: node, holder: "ProfileContextImp", reference: ".session"),
                RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
                RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
    }

    static func serviceFrame(node: UInt64, root: RetainerHolderKind) -> RetainersFrame {
        RetainersFrame(
            nodeID: node, objectIndex: 1, verdict: .holder,
            hops: [
                RetainerHop(holderKind: root, holderNodeID: root == .attachedNodeObject ? 1 : 0, holder: "main.component", reference: ""),
                RetainerHop(holderKind: .object, holder: "AppComponent", reference: ".session"),
                RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
                RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
    }

    /// A host whose node 2 detached just now, explained by `frame`, ending with `goodbye`.
    func ended(_ frames: [RetainersFrame], goodbye: GoodbyeReason?) throws -> Harness {
        var host = try RetainerTests.detachedChild()
        host.wait(Harness.second / 10)
        try host.send(frames.map(WireMessage.retainers))
        if let goodbye { try host.send([.goodbye(goodbye)]) }
        host.end(normally: goodbye != nil)
        return host
    }

    @Test func aRetainCycleFoundAtANormalExitIsLeaked() throws {
        let host = try ended([Self.cycleFrame(node: 2)], goodbye: .normalExit)
        let record = try #require(host.leaks.first)
        #expect(record.verdict == .leaked)
        #expect(record.retainers.first?.verdict == .cycle)
    }

    @Test func aPathOfHeapReferencesFromAGlobalIsLeaked() throws {
        let host = try ended([Self.serviceFrame(node: 2, root: .global)], goodbye: .normalExit)
        #expect(host.leaks.first?.verdict == .leaked)
    }

    @Test func aGlobalHoldingTheNodeIsRetainedByAGlobal() throws {
        let host = try ended([RetainerTests.globalFrame(node: 2, object: 1)], goodbye: .normalExit)
        let record = try #require(host.leaks.first)
        #expect(record.verdict == .leaked)
        #expect(record.isRetainedOnlyByGlobals)
    }

    @Test(arguments: [RetainerHolderKind.attachedNodeObject, .stack, .unknownMemory])
    func aHolderThatCouldLetGoLeavesItUnverified(root: RetainerHolderKind) throws {
        let host = try ended([Self.serviceFrame(node: 2, root: root)], goodbye: .normalExit)
        #expect(host.leaks.first?.verdict == .unverified)
    }

    @Test func anAnalysisCutShortOrMissingProvesNothing() throws {
        #expect(try ended([Self.cycleFrame(node: 2, cutShort: true)], goodbye: .normalExit).leaks.first?.verdict == .unverified)
        #expect(try ended([], goodbye: .normalExit).leaks.first?.verdict == .unverified)
    }

    @Test func anAbnormalEndOrAStoppedAgentSettlesNothing() throws {
        #expect(try ended([Self.cycleFrame(node: 2)], goodbye: nil).leaks.first?.verdict == .unverified)
        #expect(try ended([Self.cycleFrame(node: 2)], goodbye: .agentDisabled).leaks.first?.verdict == .unverified)
    }

    /// Issue 31 review, point 6: a flush that was cut may have left out a release or a newer
    /// path, so an exit whose goodbye is `flushIncomplete` settles nothing.
    @Test func aCutFlushSettlesNothing() throws {
        #expect(try ended([Self.cycleFrame(node: 2)], goodbye: .flushIncomplete).leaks.first?.verdict == .unverified)
        let global = try ended([RetainerTests.globalFrame(node: 2, object: 1)], goodbye: .flushIncomplete)
        #expect(global.leaks.first?.verdict == .unverified)
    }

    /// Issue 31 review, point 1: what the analysis reports for a cycle that a live thread's
    /// local reaches (the thread's stack, then the cycle's objects) leaves the node unverified.
    @Test func aCycleAThreadStillHoldsLeavesItUnverified() throws {
        let onlyTheStack = RetainersFrame(
            nodeID: 2, objectIndex: 1, verdict: .stack,
            hops: [RetainerHop(holderKind: .stack, holder: "thread stack", reference: "local in thread \"worker\"", isSuspect: true)])
        #expect(try ended([onlyTheStack], goodbye: .normalExit).leaks.first?.verdict == .unverified)
        let throughTheCycle = RetainersFrame(
            nodeID: 2, objectIndex: 1, verdict: .holder,
            hops: [
                RetainerHop(holderKind: .stack, holder: "thread stack", reference: "local in thread \"worker\""),
                RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 2, holder: "CycleFront", reference: ".back"),
                RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 2, holder: "CycleBack", reference: ".front", isSuspect: true),
            ])
        #expect(try ended([throughTheCycle], goodbye: .normalExit).leaks.first?.verdict == .unverified)
    }
}
