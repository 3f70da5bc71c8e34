import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Leak fingerprints: stable across runs and processes")
struct FingerprintTests {
    @Test func fnv1aMatchesTheReferenceVectors() {
        #expect(LeakFingerprint.fnv1a64("".utf8) == 0xcbf2_9ce4_8422_2325)
        #expect(LeakFingerprint.fnv1a64("a".utf8) == 0xaf63_dc4c_8601_ec8c)
        #expect(LeakFingerprint.fnv1a64("foobar".utf8) == 0x8594_4171_f739_67e8)
    }

    @Test func canonicalTextSortsRolesByBytes() {
        #expect(
            LeakFingerprint.canonicalText(
                path: ["AppFlow", "LoggedInFlow"], aliveRoles: ["worker", "flow", "context", "worker"])
                == "AppFlow/LoggedInFlow|context,flow,worker,worker")
        let print = LeakFingerprint.fingerprint(path: ["A"], aliveRoles: [])
        #expect(print.count == 16)
        #expect(print.allSatisfy { "0123456789abcdef".contains($0) })
        // "A|" hashed, padded to 16 digits.
        #expect(print == Self.hex(LeakFingerprint.fnv1a64("A|".utf8)))
    }

    /// Leaks node `leaf` under a root, with the given roles alive, in a fresh collector session.
    static func leak(
        pid: UInt32, ids: (UInt64, UInt64), start: UInt64, roles: [String], released: Set<Int> = []
    ) throws -> LeakRecord {
        var host = Harness(pid: pid, name: "app-\(pid)", now: start, hostOffset: UInt64(pid) * 1_000)
        try host.attach(ids.0, kind: "AppFlow", name: "AppFlow")
        try host.attach(ids.1, parent: ids.0, kind: "Flow", name: "LoginFlow", objects: roles)
        for index in released.sorted() { try host.release(ids.1, UInt16(index)) }
        host.wait(17)
        try host.detach(ids.1)
        host.advance(to: host.now + Harness.second)
        return try #require(host.leaks.first)
    }

    @Test func sameLeakInTwoProcessesHasTheSameFingerprint() throws {
        let first = try Self.leak(
            pid: 100, ids: (1, 2), start: 50 * Harness.second, roles: ["flow", "context", "worker"])
        let second = try Self.leak(
            pid: 200, ids: (900, 7_000), start: 90 * Harness.second, roles: ["flow", "context", "worker"])
        #expect(first.path == ["AppFlow", "LoginFlow"])
        #expect(first.nodeID != second.nodeID)
        #expect(first.pid != second.pid)
        #expect(first.flaggedAtNanos != second.flaggedAtNanos)
        #expect(first.fingerprint == second.fingerprint)
        #expect(
            first.fingerprint
                == LeakFingerprint.fingerprint(
                    path: ["AppFlow", "LoginFlow"], aliveRoles: ["context", "flow", "worker"]))
    }

    @Test func differentAliveRolesGiveADifferentFingerprint() throws {
        let all = try Self.leak(pid: 100, ids: (1, 2), start: Harness.start, roles: ["flow", "context", "worker"])
        let workerOnly = try Self.leak(
            pid: 100, ids: (1, 2), start: Harness.start, roles: ["flow", "context", "worker"], released: [0, 1])
        #expect(workerOnly.aliveObjects.map(\.role) == ["worker"])
        #expect(all.fingerprint != workerOnly.fingerprint)
    }

    @Test func differentPathsGiveDifferentFingerprints() {
        let a = LeakFingerprint.fingerprint(path: ["AppFlow", "LoginFlow"], aliveRoles: ["flow"])
        let b = LeakFingerprint.fingerprint(path: ["AppFlow", "SignupFlow"], aliveRoles: ["flow"])
        #expect(a != b)
    }

    // MARK: With retainer paths

    static let context = ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true)

    static func held(_ holder: String, _ reference: String, verdict: RetainerPath.Verdict = .holder, suspect: Bool = true)
        -> RetainerPath
    {
        RetainerPath(
            objectIndex: 1, verdict: verdict,
            hops: [
                .init(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".component"),
                .init(holderKind: .object, holder: holder, reference: reference, isSuspect: suspect),
                .init(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
    }

    @Test func theSuspectHopJoinsTheCanonicalText() {
        let text = LeakFingerprint.canonicalText(
            path: ["AppFlow", "ProfileFlow"], aliveObjects: [Self.context], retainers: [Self.held("Session", ".listeners[3]")])
        #expect(text == "AppFlow/ProfileFlow|context|context=Session:.listeners[]")
        // Without a suspect, the first hop names the path.
        let rooted = LeakFingerprint.canonicalText(
            path: ["A"], aliveObjects: [Self.context], retainers: [Self.held("Session", ".listeners[3]", suspect: false)])
        #expect(rooted == "A|context|context=AppFlowImp:.component")
    }

    @Test func twoHoldersGroupApartAndIndicesKeysAndAddressesDoNot() {
        func print(_ path: RetainerPath) -> String {
            LeakFingerprint.fingerprint(path: ["AppFlow", "ProfileFlow"], aliveObjects: [Self.context], retainers: [path])
        }
        let listeners = print(Self.held("Session", ".listeners[3]"))
        #expect(listeners == print(Self.held("Session", ".listeners[12]")), "element indices vary between runs")
        #expect(print(Self.held("Cache", ".items[\"a\"]")) == print(Self.held("Cache", ".items[\"b\"]")), "and so do keys")
        #expect(print(Self.held("a block at 0x7f00aa", "+24")) == print(Self.held("a block at 0x5500bc", "+24")))
        #expect(listeners != print(Self.held("Session", ".observers[3]")))
        #expect(listeners != print(Self.held("Analytics", ".listeners[3]")))
        // The verdict is no part of it: live a path from an attached holder, at exit a cycle.
        #expect(listeners == print(Self.held("Session", ".listeners[3]", verdict: .cycle)))
        #expect(listeners != LeakFingerprint.fingerprint(path: ["AppFlow", "ProfileFlow"], aliveRoles: ["context"]))
    }

    @Test func aLeakWithoutAPathWithHopsKeepsTheFingerprintOfVersion1() {
        let old = LeakFingerprint.fingerprint(path: ["A", "B"], aliveRoles: ["context"])
        #expect(LeakFingerprint.fingerprint(path: ["A", "B"], aliveObjects: [Self.context], retainers: []) == old)
        for verdict in [RetainerPath.Verdict.unknown, .notAnalyzed] {
            let path = RetainerPath(objectIndex: 1, verdict: verdict, note: "no reference found")
            #expect(LeakFingerprint.fingerprint(path: ["A", "B"], aliveObjects: [Self.context], retainers: [path]) == old)
        }
        // A path about an object that was not alive at the flag does not count either.
        var released = Self.held("Session", ".listeners[3]")
        released.objectIndex = 0
        #expect(LeakFingerprint.fingerprint(path: ["A", "B"], aliveObjects: [Self.context], retainers: [released]) == old)
    }

    @Test func stableNamesDropWhatVaries() {
        #expect(LeakFingerprint.stableName(".listeners[3]") == ".listeners[]")
        #expect(LeakFingerprint.stableName(".shared[\"session\"]") == ".shared[]")
        #expect(LeakFingerprint.stableName(".grid[1][2]") == ".grid[][]")
        #expect(LeakFingerprint.stableName(".a[b[c]]d") == ".a[]d")
        #expect(LeakFingerprint.stableName("block at 0x7ffee4a0b2c8, +16") == "block at 0x, +16")
        #expect(LeakFingerprint.stableName("main.app") == "main.app")
        #expect(LeakFingerprint.stableName(".open[12") == ".open[")
    }

    static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
