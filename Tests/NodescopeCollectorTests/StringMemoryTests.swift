import NodescopeWire
import Testing

@testable import NodescopeCollector

/// The memory that hosts' strings take: an ended session keeps only the strings its tree and
/// origins name, and the strings of every session kept stay within one total.
@Suite("String memory of sessions, live and ended")
struct StringMemoryTests {
    let second = Harness.second

    /// A host that interns `unused` strings of `size` bytes that nothing names.
    static func unusedStrings(_ count: Int, size: Int, from firstID: UInt32) -> [WireMessage] {
        (0..<count).map { index in
            let prefix = "u\(index)-"
            let value = prefix + String(repeating: "x", count: max(0, size - prefix.utf8.count))
            return .defineString(DefineStringFrame(stringID: firstID + UInt32(index), value: value))
        }
    }

    @Test func anEndedSessionKeepsOnlyTheStringsItsTreeAndOriginsName() throws {
        var host = Harness()
        try host.attach(1, kind: "Flow", name: "AppFlow", objects: ["flow", "context"])
        try host.attach(2, parent: 1, kind: "Leaky", objects: ["worker"])
        try host.attach(3, parent: 1, kind: "Gone", objects: ["flow"])
        try host.send([
            .defineString(DefineStringFrame(stringID: 500, value: "Sources/App/Site.swift")),
            .defineSite(DefineSiteFrame(siteID: 1, fileStringID: 500, line: 12)),
            .defineString(DefineStringFrame(stringID: 501, value: "LeakTests")),
            .defineString(DefineStringFrame(stringID: 502, value: "testLeak()")),
            .defineTest(DefineTestFrame(testID: 1, suiteStringID: 501, nameStringID: 502, siteID: 1)),
            .nodeOrigin(NodeOriginFrame(nodeID: 2, siteID: 1, testID: 1)),
        ])
        try host.send(Self.unusedStrings(1_000, size: 4_096, from: 1_000))
        try host.detach(2)
        try host.detach(3)
        try host.release(3, 0)
        let before = try #require(host.collector.sessionValue(host.session))
        #expect(before.strings.count == 1_000 + 14)

        host.wait(2 * second)
        _ = host.collector.endSession(host.session, normally: false, now: host.now)
        let after = try #require(host.collector.sessionValue(host.session))
        let kept = Set(after.strings.definitions().map(\.1))
        #expect(
            kept == [
                "Flow", "AppFlow", "flow", "Flow.flow", "context", "Flow.context", "Leaky", "worker", "Leaky.worker",
                "Sources/App/Site.swift", "LeakTests", "testLeak()",
            ])
        #expect(host.collector.stringBytes == after.strings.byteCount)
        #expect(host.collector.stringBytes < 200)
        // What the queries show of the ended session is unchanged.
        let tree = try #require(host.collector.tree(host.session))
        #expect(tree.nodes.map(\.name) == ["AppFlow", ""])
        #expect(tree.nodes.map(\.kind) == ["Flow", "Leaky"])
        #expect(tree.nodes[1].objects.map(\.typeName) == ["Leaky.worker"])
        #expect(tree.nodes[1].attachSite == SourceSite(file: "Sources/App/Site.swift", line: 12))
        #expect(host.collector.tests(host.session).map(\.name) == ["testLeak()"])
        #expect(host.collector.leaks(host.session).map(\.kind) == ["Leaky"])
    }

    @Test func theTotalDropsEndedSessionsEarliestEndedFirst() throws {
        var collector = Collector(settings: CollectorSettings(maxEndedSessions: 10, maxStringBytesTotal: 100_000))
        var now = 100 * second
        // Three hosts each keep 20 000 bytes that their trees name, then end one after another.
        var ended: [SessionID] = []
        for pid in UInt32(1)...3 {
            let session = collector.openStreamingSession(pid: pid, name: "p\(pid)", at: now)
            let named = (0..<5).map { "n\(pid)-\($0)-" + String(repeating: "y", count: 3_995) }
            for (index, name) in named.enumerated() {
                let id = UInt32(index + 1)
                _ = try collector.ingest(.defineString(DefineStringFrame(stringID: id, value: name)), session: session, now: now)
                _ = try collector.ingest(
                    .nodeAttached(
                        NodeAttachedFrame(
                            sequence: UInt64(index + 1), timeNanos: now, nodeID: UInt64(index + 1), parentID: 0, kindStringID: id,
                            nameStringID: 0)), session: session, now: now)
            }
            now += second
            _ = collector.endSession(session, normally: true, now: now)
            ended.append(session)
        }
        #expect(collector.stringBytes == 3 * 5 * 4_000)

        // A live host needs room for 50 000 bytes: the earliest ended session is dropped, and
        // only it (60 000 − 20 000 + 50 000 ≤ 100 000).
        let live = collector.openStreamingSession(pid: 9, name: "big", at: now)
        for (index, frame) in Self.unusedStrings(50, size: 1_000, from: 1).enumerated() {
            _ = try collector.ingest(frame, session: live, now: now + UInt64(index))
        }
        #expect(collector.takeSessionsDroppedForMemory().map(\.pid) == [1])
        #expect(collector.processes().map(\.session) == [live, ended[1], ended[2]])
        #expect(collector.stringBytes == 2 * 5 * 4_000 + 50_000)

        // Then the rest, and when only live strings are left, the host that would pass the
        // total is refused (the server closes its connection), its strings kept as they were.
        var refusal: SessionError?
        for frame in Self.unusedStrings(60, size: 1_000, from: 100) {
            do {
                _ = try collector.ingest(frame, session: live, now: now)
            } catch {
                refusal = error
                break
            }
        }
        #expect(collector.takeSessionsDroppedForMemory().map(\.pid) == [2, 3])
        #expect(refusal?.code == .tooManyStrings)
        #expect(refusal?.message.contains("limit of 100000 bytes of strings over all processes") == true)
        #expect(collector.stringBytes == 100_000)
        #expect(collector.processes().map(\.session) == [live])
    }

    @Test func droppedAndForgottenSessionsGiveTheirBytesBack() throws {
        var collector = Collector(settings: CollectorSettings(endedSessionRetentionNanos: 10 * second, maxEndedSessions: 1))
        let now = 100 * second
        // A phantom (nothing after its hello) is forgotten at its end.
        let phantom = collector.openSession(
            Hello(role: .host, pid: 1, monotonicNanos: now, wallNanos: 0, processName: "phantom"), now: now)
        _ = collector.endSession(phantom, normally: false, now: now)
        #expect(collector.stringBytes == 0)
        // Sessions that name what they interned keep it until retention or the count drops them.
        for pid in UInt32(2)...3 {
            let session = collector.openStreamingSession(pid: pid, name: "p\(pid)", at: now)
            _ = try collector.ingest(.defineString(DefineStringFrame(stringID: 1, value: "Kind")), session: session, now: now)
            _ = try collector.ingest(
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: now, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
                session: session, now: now)
            _ = collector.endSession(session, normally: true, now: now + UInt64(pid))
        }
        #expect(collector.processes().count == 1)
        #expect(collector.stringBytes == 4)
        _ = collector.advance(now: now + 20 * second)
        #expect(collector.processes().isEmpty)
        #expect(collector.stringBytes == 0)
    }
}
