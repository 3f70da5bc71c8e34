#if Export
import Logging
import NodescopeCollector
import Testing

@testable import NodescopeExport

/// What the daemon's OTLP stream posts when: a leak once explained or settled, each verdict once.
@Suite struct OTLPLeakStreamTests {
    private func stream() -> OTLPLeakStream {
        OTLPLeakStream(
            target: .init(url: "http://127.0.0.1:1/v1/logs", headers: [], timeoutMilliseconds: 100),
            resource: .init(serviceName: nil, attributes: []), logger: Logger(label: "test"))
    }

    private func leak(node: UInt64, verdict: LeakRecord.Verdict = .leaked, explained: Bool = false) -> LeakRecord {
        LeakRecord(
            session: SessionID(rawValue: 1), pid: 1, processName: "app", nodeID: node, kind: "Flow", path: ["A"],
            aliveObjects: [ObjectInfo(index: 0, role: "context", typeName: "C", isAlive: true)], detachedAtNanos: 0,
            flaggedAtNanos: 1, releasedAtNanos: nil, verdict: verdict, fingerprint: explained ? "after" : "before",
            retainers: explained ? [RetainerPath(objectIndex: 0, verdict: .cycle, hops: [])] : [])
    }

    @Test func aLeakWaitsForItsExplanationAtMostTheSettleTime() {
        let stream = stream()
        stream.offer([leak(node: 1)], now: 1_000)
        #expect(stream.ready(all: false, now: 1_000 + OTLPLeakStream.settleNanos - 1).isEmpty)
        #expect(stream.ready(all: false, now: 1_000 + OTLPLeakStream.settleNanos).map(\.nodeID) == [1])
        #expect(stream.ready(all: true, now: 1_000 + OTLPLeakStream.settleNanos).isEmpty)
    }

    @Test func itsExplanationMakesItReadyWithTheNewFingerprint() {
        let stream = stream()
        stream.offer([leak(node: 1), leak(node: 2)], now: 0)
        stream.offer([leak(node: 1, explained: true)], now: 10)
        #expect(stream.ready(all: false, now: 20).map(\.fingerprint) == ["after"])
        #expect(stream.ready(all: true, now: 20).map(\.nodeID) == [2])
    }

    @Test func eachVerdictIsPostedOnceAndALateReleaseIsAVerdictOfItsOwn() {
        let stream = stream()
        stream.offer([leak(node: 1, explained: true)], now: 0)
        #expect(stream.ready(all: false, now: 0).count == 1)
        stream.offer([leak(node: 1, explained: true)], now: 5)
        #expect(stream.ready(all: true, now: 5).isEmpty)
        stream.offer([leak(node: 1, verdict: .lateRelease)], now: 6)
        #expect(stream.ready(all: false, now: 6).map(\.verdict) == [.lateRelease])
    }

    @Test func pastItsBoundNewRecordsAreDroppedAndCounted() {
        let stream = stream()
        stream.offer((0..<UInt64(OTLPLeakStream.maxWaiting + 3)).map { leak(node: $0) }, now: 0)
        #expect(stream.counts.dropped == 3)
        #expect(stream.ready(all: true, now: 0).count == OTLPLeakStream.maxWaiting)
    }
}
#endif
