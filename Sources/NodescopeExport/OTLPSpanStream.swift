#if Export
import AsyncHTTPClient
import FoundationEssentials
import Logging
import NIOCore
import NodescopeCollector
import NodescopeOTLPProto
import NodescopeReports
import ServiceLifecycle
import Synchronization

/// The daemon's OTLP export of node lives (`daemon --otlp-endpoint`): one trace per host
/// process, a span per node from its attach to its last release, under its parent node's span.
///
/// The collector's loop hands over each batch of changes it makes (``offer(session:changes:arrivalNanos:tree:)``
/// only appends to a bounded queue, under a lock); once a second this service applies them to a
/// ``LifetimeLog`` per process, and posts the lives that ended: a released node's span at once, a
/// leaked or unverified one ``settleNanos`` after its verdict (ending at the verdict, with the
/// verdict as an event). When a process ends, the spans of its nodes still alive end with it,
/// then come its tests' spans and its own, the root of its trace. Span ids are derived from the
/// process and the node (with a seed of this daemon's), so a child's span names its parent's
/// whether or not that one was posted yet. A queue past its bound, or an endpoint that fails,
/// drops spans: counted, and said once per outage in the daemon's log.
package final class OTLPSpanStream: Service, Sendable {
    /// At most this many changes are taken between two posts (a second): the export's work is
    /// bounded, whatever the hosts send. A process whose changes come faster is given up (see
    /// ``offer(_:)``).
    package static let maxQueuedChanges = 50_000
    /// At most this many lives are held per process (nodes attached past it have no span).
    package static let livesPerProcess = 100_000
    /// How long after its verdict a leaked node's span is posted (its explanation comes first).
    package static let settleNanos = OTLPLeakStream.settleNanos

    /// One batch of changes the collector made of one host's message.
    package struct Batch: Sendable {
        var session: SessionID
        var changes: [TreeChange]
        var arrivalNanos: UInt64
        var tree: TreeView?

        /// A batch, with the tree after it when it holds a resync.
        package init(session: SessionID, changes: [TreeChange], arrivalNanos: UInt64, tree: TreeView?) {
            self.session = session
            self.changes = changes
            self.arrivalNanos = arrivalNanos
            self.tree = tree
        }
    }

    private struct Queue {
        var batches: [Batch] = []
        var changes = 0
        /// Processes given up: their changes came faster than the bound.
        var givenUp: Set<SessionID> = []
        /// Changes not taken (of processes given up).
        var droppedChanges = 0
    }

    /// One process's lives, leaks and tests, between two posts.
    private struct ProcessLives {
        var log = LifetimeLog(startNanos: 0, limit: OTLPSpanStream.livesPerProcess)
        var leaks: [UInt64: [LeakRecord]] = [:]
        var tests: [TestInfo: (start: UInt64, end: UInt64, failed: Bool)] = [:]
        var endedAt: UInt64?
        var nodes = 0
        var givenUp = false
    }

    private let target: OTLPConfiguration.Target
    private let resource: OTLPResource
    private let logger: Logger
    private let processes: @Sendable () async throws -> [ProcessSummary]
    private let ids = StableSpanIDs()
    private let queue = Mutex(Queue())
    private let lives = Mutex<[SessionID: ProcessLives]>([:])
    private let health: OTLPExportHealth
    private let overflowSaid = Mutex(false)

    /// A stream to `target`, the traces' endpoint; `processes` lists the daemon's processes (for
    /// their names).
    package init(
        target: OTLPConfiguration.Target, resource: OTLPResource, logger: Logger,
        processes: @escaping @Sendable () async throws -> [ProcessSummary]
    ) {
        self.target = target
        self.health = OTLPExportHealth("span", endpoint: target.url, logger: logger)
        self.resource = resource
        self.logger = logger
        self.processes = processes
    }

    /// Spans sent, and spans or changes dropped, so far.
    package var sentAndDropped: (sent: Int, dropped: Int) {
        let dropped = queue.withLock { $0.droppedChanges }
        let (sent, failed) = health.counts
        return (sent, failed + dropped)
    }

    /// Takes batches of changes from the collector's loop, under one lock; returns at once, with
    /// the processes given up (the collector need not hand over their changes any more).
    ///
    /// A process whose changes would pass ``maxQueuedChanges`` before the next post is given
    /// up: its changes are dropped from then on (counted), its lives still held are dropped at
    /// the next post, and its own span, when it ends, says so (`nodescope.spans.dropped`).
    /// Spans made from a stream with holes in it would tell wrong lives; no span tells none.
    @discardableResult
    package func offer(_ batches: [Batch]) -> [SessionID] {
        queue.withLock { queue in
            var declined: [SessionID] = []
            for batch in batches {
                if queue.givenUp.contains(batch.session) {
                    queue.droppedChanges += batch.changes.count
                    // Its end still comes through: its process's span closes its trace.
                    // (a session's end is the last change of its batch)
                    if case .sessionEnded(let normally)? = batch.changes.last {
                        queue.batches.append(
                            Batch(
                                session: batch.session, changes: [.sessionEnded(normally: normally)], arrivalNanos: batch.arrivalNanos,
                                tree: nil))
                    }
                    continue
                }
                guard queue.changes + batch.changes.count <= Self.maxQueuedChanges else {
                    queue.givenUp.insert(batch.session)
                    queue.droppedChanges += batch.changes.count
                    declined.append(batch.session)
                    continue
                }
                queue.batches.append(batch)
                queue.changes += batch.changes.count
            }
            return declined
        }
    }

    /// Posts what ended once a second until the daemon stops, then every life still open, within
    /// a second.
    package func run() async throws {
        let client = OTLPHTTP.makeClient(connectMilliseconds: target.timeoutMilliseconds)
        try? await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(1))
                await self.post(
                    final: false, client: client,
                    before: NIODeadline.now() + .milliseconds(Int64(self.target.timeoutMilliseconds)))
            }
        }
        let last = NIODeadline.now() + .milliseconds(Int64(min(target.timeoutMilliseconds, OTLPLeakStream.lastPostMilliseconds)))
        await post(final: true, client: client, before: last)
        await OTLPHTTP.shutDown(client, before: last + .milliseconds(200))
    }

    private func post(final: Bool, client: HTTPClient, before deadline: NIODeadline) async {
        let summaries = (try? await processes()) ?? []
        let requests = self.requests(now: OTLPLeakStream.monotonicNow(), final: final, processes: summaries, clock: UnixClock())
        guard !requests.isEmpty else { return }
        let outcome = await OTLPHTTP.post(requests, to: target, client: client, deadline: deadline)
        health.record(outcome, dropping: "node spans are dropped")
    }

    /// Applies what the loop handed over and turns what ended into export requests; with
    /// `final`, every life still open too (ending `now`).
    func requests(
        now: UInt64, final: Bool, processes: [ProcessSummary], clock: UnixClock
    ) -> [Opentelemetry_Proto_Collector_Trace_V1_ExportTraceServiceRequest] {
        let (pending, dropped, givenUp) = queue.withLock { queue in
            defer {
                queue.batches = []
                queue.changes = 0
            }
            return (queue.batches, queue.droppedChanges, queue.givenUp)
        }
        if dropped > 0 {
            let first = overflowSaid.withLock { said in
                defer { said = true }
                return !said
            }
            if first {
                logger.warning(
                    "OTLP span export: a process's changes came faster than the export's bound; its nodes have no span",
                    metadata: ["bound": "\(Self.maxQueuedChanges) changes a second"])
            }
        }
        let summaries = Dictionary(processes.map { ($0.session, $0) }, uniquingKeysWith: { first, _ in first })
        var batches = OTLPNodeSpans.Batches(perRequest: OTLPNodeSpans.spansPerRequest)
        lives.withLock { lives in
            for batch in pending {
                // Taken out and put back, so that the log is changed in place, never copied.
                var process = lives.removeValue(forKey: batch.session) ?? ProcessLives()
                if givenUp.contains(batch.session) {
                    // Given up: what it held is dropped, only its end is kept.
                    if process.log.count > 0 {
                        health.dropped(process.log.count)
                        process.log = LifetimeLog(startNanos: 0, limit: 0)
                    }
                    process.givenUp = true
                } else {
                    process.log.apply(batch.changes, at: batch.arrivalNanos) { batch.tree }
                }
                for change in batch.changes {
                    switch change {
                    case .leakFlagged(let record), .retainersFound(_, _, .some(let record)):
                        var records = process.leaks[record.nodeID] ?? []
                        records.removeAll { $0.verdict == record.verdict }
                        records.append(record)
                        process.leaks[record.nodeID] = records
                    case .sessionEnded:
                        process.endedAt = batch.arrivalNanos
                    default:
                        break
                    }
                }
                lives[batch.session] = process
            }
            for session in lives.keys.sorted(by: { $0.rawValue < $1.rawValue }) {
                guard var process = lives.removeValue(forKey: session) else { continue }
                let summary =
                    summaries[session]
                    ?? ProcessSummary(
                        session: session, pid: 0, processName: "unknown", connectedAtNanos: 0, endedAtNanos: process.endedAt,
                        endedNormally: nil, liveNodes: 0, leaks: 0, eventsIngested: 0, droppedReported: 0)
                let ending = final || process.endedAt != nil
                let end = process.endedAt ?? now
                var taken = process.log.takeEnded(flaggedBy: now >= Self.settleNanos ? now - Self.settleNanos : 0)
                if ending { taken += process.log.finished() }
                let processResource = resource.process(name: summary.processName, pid: summary.pid, session: session)
                let traceID = ids.trace(session)
                for lifetime in taken {
                    let leaks = process.leaks.removeValue(forKey: lifetime.id) ?? []
                    let parent =
                        lifetime.parent.map { ids.node(session, $0) } ?? lifetime.test.map { ids.test(session, $0) }
                        ?? ids.process(session)
                    let spanEnd = max(lifetime.endedAt ?? lifetime.flaggedAt ?? end, lifetime.attachedAt)
                    batches.add(
                        OTLPNodeSpans.nodeSpan(
                            lifetime, traceID: traceID, id: ids.node(session, lifetime.id), parent: parent, end: spanEnd, leaks: leaks,
                            clock: clock),
                        resource: processResource)
                    process.nodes += 1
                    if let test = lifetime.test {
                        let failed = leaks.contains(where: OTLPNodeSpans.isFailing)
                        let range = process.tests[test] ?? (lifetime.attachedAt, spanEnd, false)
                        process.tests[test] = (min(range.start, lifetime.attachedAt), max(range.end, spanEnd), range.failed || failed)
                    }
                }
                guard ending else {
                    lives[session] = process
                    continue
                }
                for (test, range) in process.tests.sorted(by: { $0.value.start < $1.value.start }) {
                    batches.add(
                        OTLPNodeSpans.testSpan(
                            test, traceID: traceID, id: ids.test(session, test), parent: ids.process(session), start: range.start,
                            end: range.end, failed: range.failed, clock: clock),
                        resource: processResource)
                }
                let start = summary.startedAtNanos.map { min($0, summary.connectedAtNanos) } ?? summary.connectedAtNanos
                var processSpan = OTLPNodeSpans.processSpan(
                    summary, traceID: traceID, id: ids.process(session), parent: nil, start: start, end: max(end, start),
                    nodes: process.nodes + process.log.untracked, untracked: process.log.untracked,
                    failed: summary.counts.leaked > 0, clock: clock)
                if process.givenUp { processSpan.attributes.append(.pair("nodescope.spans.dropped", .bool(true))) }
                batches.add(processSpan, resource: processResource)
                lives[session] = nil
                if process.givenUp { queue.withLock { _ = $0.givenUp.remove(session) } }
            }
        }
        return batches.requestsWithLast
    }
}

/// Span and trace ids derived from a process's session and a node's id (or a test's name), with
/// a random seed of this daemon's: the same node has the same span id in every post, so a
/// child's span names its parent's before that one is posted. SplitMix64's finalizer mixes them.
struct StableSpanIDs: Sendable {
    private let seed: UInt64 = {
        var generator = SystemRandomNumberGenerator()
        return generator.next()
    }()

    /// A process's trace.
    func trace(_ session: SessionID) -> Data {
        let high = Self.mix(seed ^ Self.mix(session.rawValue &+ 0x1000))
        let low = Self.mix(high ^ 0x5DEE_CE66_D1CE_4E5B)
        return Self.bytes(high) + Self.bytes(low == 0 ? 1 : low)
    }

    /// A process's own span: the root of its trace.
    func process(_ session: SessionID) -> Data {
        Self.bytes(Self.nonZero(Self.mix(Self.mix(seed ^ session.rawValue) ^ 0x9E37_79B9_7F4A_7C15)))
    }

    /// A node's span.
    func node(_ session: SessionID, _ node: UInt64) -> Data {
        Self.bytes(Self.nonZero(Self.mix(Self.mix(seed ^ session.rawValue) &+ Self.mix(node &+ 1))))
    }

    /// A test's span.
    func test(_ session: SessionID, _ test: TestInfo) -> Data {
        // FNV-1a of the test's name: stable within the daemon, whatever Hasher's seed.
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in test.description.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Self.bytes(Self.nonZero(Self.mix(Self.mix(seed ^ session.rawValue) ^ Self.mix(hash ^ 0x7E57))))
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var mixed = value &+ 0x9E37_79B9_7F4A_7C15
        mixed = (mixed ^ (mixed >> 30)) &* 0xBF58_476D_1CE4_E5B9
        mixed = (mixed ^ (mixed >> 27)) &* 0x94D0_49BB_1331_11EB
        return mixed ^ (mixed >> 31)
    }

    private static func nonZero(_ value: UInt64) -> UInt64 { value == 0 ? 1 : value }

    private static func bytes(_ value: UInt64) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }
}
#endif
