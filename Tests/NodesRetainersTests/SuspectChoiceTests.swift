import NodesDebug
import NodescopeWire
import Testing

@testable import NodesRetainers
@testable import NodesTracking

/// The suspect of a retain cycle (issue 31, point 5): one per cycle whichever of its objects the
/// path starts from, never the architecture's normal ownership when a back-reference exists,
/// and the same field of the same owner that a path from a root names.
@Suite("The suspect of a cycle")
struct SuspectChoiceTests {
    /// The VIPER cycle of sample-viper: block 1 the presenter, block 2 its view.
    let roles: [Int32: String] = [1: "presenter", 2: "view"]

    func hop(_ holder: String, _ reference: String, kind: RetainerHolderKind = .detachedNodeObject) -> RetainerHop {
        RetainerHop(holderKind: kind, holderNodeID: kind == .detachedNodeObject ? 8 : 0, holder: holder, reference: reference)
    }

    func suspect(_ hops: [RetainerHop], referred: [Int32], closures: [Bool]? = nil) -> String? {
        var hops = hops
        RetainerAnalysis.markSuspect(
            &hops, referred: referred, closures: closures ?? hops.map { _ in false }, isCycle: true,
            isLeaking: { _ in true }, role: { roles[$0] })
        return hops.first(where: \.isSuspect).map { $0.holder + $0.reference }
    }

    @Test func theBackReferenceIsTheSuspectFromEitherEnd() {
        // From the presenter: presenter .strongView -> view .presenter -> presenter.
        let fromPresenter = suspect(
            [hop("ProfileEditPresenter", ".strongView"), hop("ProfileEditViewController", ".presenter")], referred: [2, 1])
        // From the view: view .presenter -> presenter .strongView -> view.
        let fromView = suspect(
            [hop("ProfileEditViewController", ".presenter"), hop("ProfileEditPresenter", ".strongView")], referred: [1, 2])
        #expect(fromPresenter == "ProfileEditPresenter.strongView")
        #expect(fromView == "ProfileEditPresenter.strongView")
    }

    @Test func withoutRolesTheChoiceStillDoesNotDependOnTheStart() {
        let a = suspect([hop("A", ".b"), hop("B", ".a")], referred: [12, 11])
        let b = suspect([hop("B", ".a"), hop("A", ".b")], referred: [11, 12])
        #expect(a == b)
        #expect(a == "A.b")
    }

    @Test func theReferenceBackIntoTheNodeComesFirst() {
        // context .partner -> Partner .context -> context (block 3 is the node's context).
        var hops = [hop("CycleContext", ".partner"), hop("Partner", ".context", kind: .object)]
        RetainerAnalysis.markSuspect(
            &hops, referred: [4, 3], closures: [false, false], isCycle: true, isLeaking: { _ in true },
            role: { $0 == 3 ? "context" : nil })
        #expect(hops.first(where: \.isSuspect).map { $0.holder + $0.reference } == "Partner.context")
    }

    @Test func aClosureInTheCycleIsNamedByTheFieldOfItsOwner() {
        // interactor .profileStream -> ReplayStream .observers[0] -> closure context capture -> interactor
        let hops = [
            hop("RequestInteractor", ".profileStream"), hop("ReplayStream<RiderProfile>", ".observers[0]", kind: .object),
            hop("closure context", "capture", kind: .closureContext),
        ]
        #expect(suspect(hops, referred: [21, 22, 20], closures: [false, false, true]) == "ReplayStream<RiderProfile>.observers[0]")
    }

    /// Issue 31 review, point 3: a child context C and its parent context P keep each other
    /// (P .child -> C, C .parent -> P). While P is attached, the path from it names
    /// `ParentContext .child`, the reference entering C's node; at exit both are detached and
    /// it is a cycle, whose suspect for C's node must be the same reference, from either end.
    @Test func inACycleOfTwoNodesTheReferenceEnteringTheTargetsNodeIsTheSuspect() {
        // Block 31 is C (node 3), block 32 is P (node 4).
        let nodes: [Int32: UInt64] = [31: 3, 32: 4]
        func cycleSuspect(_ hops: [RetainerHop], referred: [Int32]) -> String? {
            var hops = hops
            RetainerAnalysis.markSuspect(
                &hops, referred: referred, closures: hops.map { _ in false }, isCycle: true, isLeaking: { _ in true },
                role: { _ in "context" }, node: { nodes[$0] }, targetNode: 3)
            return hops.first(where: \.isSuspect).map { $0.holder + $0.reference }
        }
        // From C: C .parent -> P .child -> C.
        let fromChild = cycleSuspect([hop("ChildContext", ".parent"), hop("ParentContext", ".child")], referred: [32, 31])
        // From P: P .child -> C .parent -> P.
        let fromParent = cycleSuspect([hop("ParentContext", ".child"), hop("ChildContext", ".parent")], referred: [31, 32])
        // The live path: P (attached, a root) .child -> C.
        var live = [hop("ParentContext", ".child", kind: .attachedNodeObject)]
        RetainerAnalysis.markSuspect(&live, referred: [31], closures: [false], isCycle: false, isLeaking: { $0 == 31 })
        #expect(live.first(where: \.isSuspect).map { $0.holder + $0.reference } == "ParentContext.child")
        #expect(fromChild == "ParentContext.child")
        #expect(fromParent == "ParentContext.child")
    }

    /// Issue 31 review, point 5: a path cut to the frame's bound keeps every hop that could
    /// still let go (a stack, a task), so that a long path never proves a leak the full path
    /// would not; when even those do not fit, the path is cut short.
    @Test func aTruncatedPathKeepsTheHopsThatCouldLetGo() {
        var hops = (0..<80).map { hop("Link\($0)", ".next", kind: .object) }
        hops[0] = hop("Registry.shared", "", kind: .global)
        hops[30] = hop("async task", "frame", kind: .unknownMemory)
        let (kept, lost) = RetainerAnalysis.truncated(hops, to: 64)
        #expect(kept.count == 64)
        #expect(!lost)
        #expect(kept.first?.holderKind == .global)
        #expect(kept.contains { $0.holderKind == .unknownMemory })
        #expect(kept.last?.holder == "Link79")
        let stacks = (0..<70).map { hop("thread stack \($0)", "", kind: .stack) }
        let (_, lostStacks) = RetainerAnalysis.truncated(hops + stacks, to: 64)
        #expect(lostStacks)
    }
}
