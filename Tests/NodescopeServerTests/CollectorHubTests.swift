import Glibc
import Logging
import NIOCore
import NIOEmbedded
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeWire
import Synchronization
import Testing

@testable import NodescopeServer

/// The hub and the connection handler through NIO's in-memory channels, on the embedded loop's
/// manual clock: subscriptions and their stream, slow clients let go, the deadlines, the
/// retention timer, and the one log line each closed connection leaves.
@Suite("CollectorHub over EmbeddedChannels, on a manual clock")
struct CollectorHubTests {
    private let strings: [WireMessage] = [
        .defineString(DefineStringFrame(stringID: 1, value: "Flow")),
        .defineString(DefineStringFrame(stringID: 2, value: "flow")),
    ]

    /// Host 42 "app", accepted, with its strings defined and an empty snapshot sent.
    private func streamingHost(_ collector: EmbeddedCollector, peerPID: Int32? = nil) throws -> EmbeddedChannel {
        let host = try collector.connect(peerPID: peerPID)
        try collector.send([Frames.hostHello] + strings + Frames.emptySnapshot, to: host)
        return host
    }

    /// The events `channel` received since the last read, as subscription id and change.
    private func events(_ collector: EmbeddedCollector, from channel: EmbeddedChannel) throws -> [(UInt32, TreeChange)] {
        try collector.replies(from: channel).compactMap { message in
            guard case .event(let event) = message else { return nil }
            return (event.subscriptionID, try ControlBody.decode(TreeChange.self, from: event.body))
        }
    }

    /// The responses `channel` received since the last read.
    private func responses(_ collector: EmbeddedCollector, from channel: EmbeddedChannel) throws -> [ControlResponseFrame] {
        try collector.replies(from: channel).compactMap { message in
            guard case .response(let response) = message else { return nil }
            return response
        }
    }

    @Test func aSubscriberGetsTheTreeThenEachChangeThenTheEnd() throws {
        let collector = EmbeddedCollector()
        let host = try streamingHost(collector)
        try collector.send([Frames.attached(1, sequence: 1)], to: host)
        let client = try collector.connect()
        try collector.send([Frames.clientHello, Frames.request(9, .subscribe, "app")], to: client)
        let answer = try #require(try responses(collector, from: client).first)
        #expect(answer.requestID == 9 && answer.status == .ok && answer.isLast)
        #expect(try ControlBody.decode(TreeView.self, from: answer.body).nodes.map(\.id) == [1])

        try collector.send(
            [
                Frames.attached(2, parent: 1, sequence: 2),
                .stateChanged(StateChangedFrame(sequence: 3, timeNanos: 2, nodeID: 2, state: .active)),
            ], to: host)
        let changes = try events(collector, from: client)
        #expect(changes.map(\.0) == [9, 9])
        guard case .attached(let node) = changes.first?.1 else {
            Issue.record("expected the attached node first, got \(changes)")
            return
        }
        #expect(node.id == 2 && node.parent == 1)
        #expect(changes.last?.1 == .statusChanged(id: 2, status: .active))

        // The host goes: the subscription gets its end, and is over.
        try collector.send([.goodbye(.normalExit)], to: host)
        #expect(try events(collector, from: client).map(\.1) == [.sessionEnded(normally: true)])
        try collector.send([Frames.request(10, .unsubscribe, "9")], to: client)
        #expect(try responses(collector, from: client).map(\.status) == [.notFound])
        #expect(collector.logLines(atLeast: .notice).isEmpty)
    }

    @Test func anObserverIsToldOfEachBatchWithItsArrivalAndTheTreeAfterAResync() throws {
        let seen = Mutex<[ObservedChanges]>([])
        let bunches = Mutex(0)
        let collector = EmbeddedCollector { batches in
            seen.withLock { $0 += batches }
            bunches.withLock { $0 += 1 }
            return []
        }
        let host = try streamingHost(collector)
        collector.advance(by: .milliseconds(5))
        try collector.send([Frames.attached(1, sequence: 1), Frames.attached(2, parent: 1, sequence: 2)], to: host)
        try collector.send([.goodbye(.normalExit)], to: host)
        // The batches are handed over at the end of the loop's turn, in bunches.
        collector.loop.run()
        let batches = seen.withLock { $0 }
        #expect(bunches.withLock { $0 } < batches.count)
        // The snapshot is a resync: its batch carries the tree after it.
        let resync = try #require(batches.first { $0.changes.contains(.resynced) })
        #expect(resync.treeAfterResync?.nodes.isEmpty == true)
        let attaches = batches.filter { $0.changes.contains { if case .attached = $0 { true } else { false } } }
        #expect(attaches.count == 2 && attaches.allSatisfy { $0.arrivalNanos == 5_000_000 && $0.treeAfterResync == nil })
        #expect(batches.last?.changes.last == .sessionEnded(normally: true))
        #expect(Set(batches.map(\.session)).count == 1)
    }

    @Test func aSessionTheObserverDeclinesHandsOverOnlyItsEnd() throws {
        let seen = Mutex<[ObservedChanges]>([])
        let collector = EmbeddedCollector { batches in
            seen.withLock { $0 += batches }
            return batches.map(\.session)
        }
        let host = try streamingHost(collector)
        collector.loop.run()
        let before = seen.withLock { $0.count }
        try collector.send([Frames.attached(1, sequence: 1), Frames.attached(2, parent: 1, sequence: 2)], to: host)
        try collector.send([.goodbye(.normalExit)], to: host)
        collector.loop.run()
        let after = seen.withLock { Array($0.dropFirst(before)) }
        #expect(after.map(\.changes) == [[.sessionEnded(normally: true)]])
    }

    @Test func aDeclinedSessionBesideAnotherLosesOnlyItsOwnChanges() throws {
        // The hub keeps its last answer for a session: messages of two hosts in turns must
        // each get their own.
        let seen = Mutex<[ObservedChanges]>([])
        let collector = EmbeddedCollector { batches in
            seen.withLock { $0 += batches }
            return batches.map(\.session).filter { $0 == SessionID(rawValue: 1) }
        }
        let first = try streamingHost(collector)
        let second = try collector.connect()
        try collector.send(
            [.hello(Hello(role: .host, pid: 43, monotonicNanos: 0, wallNanos: 0, processName: "other"))] + strings + Frames.emptySnapshot,
            to: second)
        collector.loop.run()
        let before = seen.withLock { $0.count }
        for id in UInt64(1)...3 {
            try collector.send([Frames.attached(id, sequence: id)], to: first)
            try collector.send([Frames.attached(id, sequence: id)], to: second)
        }
        try collector.send([.goodbye(.normalExit)], to: first)
        try collector.send([.goodbye(.normalExit)], to: second)
        collector.loop.run()
        let after = seen.withLock { Array($0.dropFirst(before)) }
        #expect(after.filter { $0.session == SessionID(rawValue: 1) }.map(\.changes) == [[.sessionEnded(normally: true)]])
        let other = after.filter { $0.session == SessionID(rawValue: 2) }.flatMap(\.changes)
        #expect(other.filter { if case .attached = $0 { true } else { false } }.count == 3)
        #expect(other.last == .sessionEnded(normally: true))
    }

    @Test func anUnsubscribedClientGetsNoMoreEvents() throws {
        let collector = EmbeddedCollector()
        let host = try streamingHost(collector)
        let client = try collector.connect()
        try collector.send(
            [Frames.clientHello, Frames.request(1, .subscribe, "42"), Frames.request(2, .unsubscribe, "1")],
            to: client)
        #expect(try responses(collector, from: client).map(\.status) == [.ok, .ok])
        try collector.send([Frames.attached(1, sequence: 1)], to: host)
        #expect(try events(collector, from: client).isEmpty)
    }

    @Test func aSubscriberThatDoesNotKeepUpIsLetGoWithOneLoggedLine() throws {
        let collector = EmbeddedCollector(limits: ServerLimits(maxPendingSubscriberBytes: 1))
        let host = try streamingHost(collector)
        let unread = UnreadWrites()
        let slow = try collector.connect(unread: unread)
        try collector.send([Frames.clientHello, Frames.request(1, .subscribe, "app")], to: slow)
        let reader = try collector.connect()
        try collector.send([Frames.clientHello, Frames.request(2, .subscribe, "app")], to: reader)
        // The slow client's answer waits unread: as many bytes as the reader's (same tree, same layout).
        let waiting = try FrameEncoder.encoded(.response(#require(try responses(collector, from: reader).first))).count

        try collector.send([Frames.attached(1, sequence: 1)], to: host)
        #expect(!slow.isActive)
        #expect(host.isActive && reader.isActive)
        #expect(try events(collector, from: reader).count == 1)
        #expect(
            collector.logLines(atLeast: .notice) == [
                "closing client 7 (nodescope): the subscriber does not keep up (\(waiting) bytes waiting, over the limit of 1)"
            ])
        // The reader goes on receiving.
        try collector.send([Frames.attached(2, sequence: 2)], to: host)
        #expect(try events(collector, from: reader).count == 1)
    }

    @Test func aClientThatAsksAgainWithoutReadingIsDisconnected() throws {
        let collector = EmbeddedCollector(limits: ServerLimits(maxPendingClientBytes: 1))
        _ = try streamingHost(collector)
        let client = try collector.connect(unread: UnreadWrites())
        try collector.send([Frames.clientHello, Frames.request(1, .listProcesses)], to: client)
        #expect(client.isActive)
        // The first answer waits unread.
        let answer = ControlResponseFrame.parts(requestID: 1, status: .ok, body: ControlBody.encode(collector.hub.collector.processes()))
        let waiting = answer.map { FrameEncoder.encoded(.response($0)).count }.reduce(0, +)
        try collector.send([Frames.request(2, .listProcesses)], to: client)
        #expect(!client.isActive)
        #expect(
            collector.logLines(atLeast: .notice) == [
                "closing client 7 (nodescope): the client does not read its answers (\(waiting) bytes waiting, over the limit of 1)"
            ])
    }

    /// (Closed after five seconds and a last look, 50 ms later, at what the loop read since.)
    @Test func aPeerThatSaysNoHelloIsClosedAfterFiveSecondsWithItsPid() throws {
        let collector = EmbeddedCollector()
        let peer = try collector.connect(peerPID: 777)
        collector.advance(by: .milliseconds(5_049))
        #expect(peer.isActive)
        collector.advance(by: .milliseconds(1))
        #expect(!peer.isActive)
        #expect(collector.logLines(atLeast: .notice) == ["closing peer pid 777: no hello within 5 s"])
        #expect(collector.hub.collector.processes().isEmpty)
    }

    @Test func aFrameLeftIncompleteIsClosedAfterTenSecondsAsAnAbnormalEnd() throws {
        let collector = EmbeddedCollector()
        let host = try streamingHost(collector)
        // Six of the thirteen bytes of a heartbeat, then nothing.
        try host.writeInbound(ByteBuffer(bytes: [0x09, 0, 0, 0, 0x1A, 1]))
        collector.advance(by: .milliseconds(9_999))
        #expect(host.isActive)
        collector.advance(by: .milliseconds(1))
        #expect(!host.isActive)
        #expect(collector.logLines(atLeast: .notice) == ["closing host 42 (app): a frame stayed incomplete for 10 s"])
        #expect(collector.hub.collector.processes().first?.endedNormally == false)
    }

    @Test func aViolationIsLoggedOnceWithTheSocketPeersPidWhenItDiffers() throws {
        let collector = EmbeddedCollector()
        let host = try streamingHost(collector, peerPID: 4343)
        // A length of 70 000 bytes: rejected as soon as the length is read.
        try host.writeInbound(ByteBuffer(bytes: [0x70, 0x11, 0x01, 0x00, 0x13]))
        #expect(!host.isActive)
        #expect(
            collector.logLines(atLeast: .notice) == [
                "closing host 42 (app) [socket peer pid 4343]: malformed frame: frame of 70000 bytes exceeds the 65536-byte limit"
            ])
    }

    @Test func aHostThatSimplyExitsIsNotAWarning() throws {
        let collector = EmbeddedCollector()
        // A goodbye, a close without one (a crash), and a reset as the process exits.
        let polite = try streamingHost(collector)
        try collector.send([.goodbye(.normalExit)], to: polite)
        let crashed = try streamingHost(collector)
        try crashed.close().wait()
        let reset = try streamingHost(collector)
        reset.pipeline.fireErrorCaught(IOError(errnoCode: ECONNRESET, reason: "read"))
        #expect(!polite.isActive && !crashed.isActive && !reset.isActive)
        #expect(collector.logLines(atLeast: .warning).isEmpty)
        #expect(collector.hub.collector.processes().map(\.endedNormally) == [true, false, false])
    }

    @Test func theRetentionTimerDropsEndedSessionsOnTheLoopsClock() throws {
        let minute: UInt64 = 60_000_000_000
        let collector = EmbeddedCollector(settings: CollectorSettings(endedSessionRetentionNanos: minute))
        let first = try streamingHost(collector)
        try collector.send([.goodbye(.normalExit)], to: first)
        collector.advance(by: .seconds(30))
        let second = try streamingHost(collector)
        try collector.send([.goodbye(.normalExit)], to: second)
        #expect(collector.hub.collector.processes().count == 2)

        collector.advance(by: .milliseconds(29_999))
        #expect(collector.hub.collector.processes().count == 2)
        collector.advance(by: .milliseconds(1))
        #expect(collector.hub.collector.processes().map(\.connectedAtNanos) == [30_000_000_000])
        // The timer moved on to the second session's deadline.
        collector.advance(by: .seconds(30))
        #expect(collector.hub.collector.processes().isEmpty)
    }

    @Test func aLeakIsFlaggedByTheHostsWatermarkNeverByTheCollectorsClock() throws {
        let second: UInt64 = 1_000_000_000
        let collector = EmbeddedCollector(settings: CollectorSettings(graceNanos: second))
        let host = try streamingHost(collector)
        let client = try collector.connect()
        try collector.send([Frames.clientHello, Frames.request(3, .subscribe, "app")], to: client)
        _ = try collector.replies(from: client)
        try collector.send(
            [
                .heartbeat(monotonicNanos: 1),
                Frames.attached(1, sequence: 1),
                .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
                .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 10, nodeID: 1)),
            ], to: host)
        _ = try events(collector, from: client)

        // An hour on the collector's clock flags nothing: the host has not vouched for its time.
        collector.advance(by: .hours(1))
        #expect(try events(collector, from: client).isEmpty)
        #expect(collector.hub.collector.leaks(nil).isEmpty)

        // A heartbeat past detach + grace flags the node, for the subscriber and in the log.
        try collector.send([.heartbeat(monotonicNanos: 10 + second)], to: host)
        let flagged = try events(collector, from: client).compactMap { event -> LeakRecord? in
            if case .leakFlagged(let record) = event.1 { record } else { nil }
        }
        #expect(flagged.map(\.verdict) == [.leaked])
        #expect(flagged.first?.flaggedAtNanos == 10 + second)
        #expect(collector.logLines(atLeast: .notice) == ["leak flagged"])
    }
}
