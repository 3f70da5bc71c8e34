import Logging
import NIOCore
import NIOEmbedded
import NodescopeCollector
import NodescopeControl
@testable import NodescopeServer
import NodescopeWire
import Testing

/// The connection handler through NIO's in-memory channel: bytes in, frames and collector
/// state out, no sockets.
@Suite("WireConnectionHandler over an EmbeddedChannel")
struct WireConnectionHandlerTests {
    private func makeChannel(hub: CollectorHub, loop: EmbeddedEventLoop) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try channel.pipeline.syncOperations.addHandler(
            WireConnectionHandler(hub: NIOLoopBound(hub, eventLoop: loop), peer: nil, logger: Logger(label: "test")))
        // An embedded channel is inactive until connected; the handler reads only while active.
        try channel.connect(to: SocketAddress(unixDomainSocketPath: "/embedded")).wait()
        return channel
    }

    private func send(_ messages: [WireMessage], to channel: EmbeddedChannel) throws {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        // One byte at a time: the handler must reassemble frames across reads.
        for byte in bytes { try channel.writeInbound(ByteBuffer(bytes: [byte])) }
    }

    private func replies(from channel: EmbeddedChannel) throws -> [WireMessage] {
        var decoder = FrameDecoder()
        while let buffer = try channel.readOutbound(as: ByteBuffer.self) {
            buffer.withUnsafeReadableBytes { decoder.feed($0) }
        }
        var messages: [WireMessage] = []
        while let message = try decoder.next() { messages.append(message) }
        return messages
    }

    private let hello = WireMessage.hello(Hello(role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"))

    @Test func aHostIsAcceptedAndItsTreeReachesTheCollector() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(holdExit: true), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        try send([
            hello,
            .defineString(DefineStringFrame(stringID: 1, value: "Flow")),
            .defineString(DefineStringFrame(stringID: 2, value: "AppFlow")),
            .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)),
            .snapshotEnd(sequence: 0),
            .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 2)),
        ], to: channel)
        guard case let .helloAccepted(accepted)? = try replies(from: channel).first else {
            Issue.record("no helloAccepted")
            return
        }
        #expect(accepted.holdExit)
        #expect(hub.collector.processes().map(\.processName) == ["app"])
        let session = try #require(hub.collector.processes().first?.session)
        #expect(hub.collector.tree(session)?.nodes.map(\.name) == ["AppFlow"])

        // The session ends at its goodbye, and the collector closes the connection.
        try send([.goodbye(.normalExit)], to: channel)
        #expect(!channel.isActive)
        #expect(hub.collector.processes().first?.endedNormally == true)
    }

    @Test func aMalformedFrameClosesOnlyThatConnection() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let good = try makeChannel(hub: hub, loop: loop)
        let bad = try makeChannel(hub: hub, loop: loop)
        let snapshot: [WireMessage] = [.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0)]
        try send([hello] + snapshot, to: good)
        try send([hello] + snapshot, to: bad)
        // A length far beyond the limit: the decoder rejects it after the header.
        try bad.writeInbound(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0x7F, 0x13]))
        #expect(!bad.isActive)
        #expect(good.isActive)
        #expect(hub.collector.processes().map { $0.endedNormally } == [nil, false])
    }

    @Test func aProtocolViolationClosesTheConnection() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        // A node that names a string never defined.
        try send([
            hello, .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
            .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 7, nameStringID: 8)),
        ], to: channel)
        #expect(!channel.isActive)
    }

    @Test func aClientGetsAnswersInJSON() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let host = try makeChannel(hub: hub, loop: loop)
        try send([hello], to: host)
        let client = try makeChannel(hub: hub, loop: loop)
        try send([
            .hello(Hello(role: .client, pid: 7, monotonicNanos: 0, wallNanos: 0, processName: "nodescope")),
            .request(ControlRequestFrame(requestID: 5, command: .listProcesses)),
            .request(ControlRequestFrame(requestID: 6, command: .tree, argument: "nothing-like-this")),
        ], to: client)
        let messages = try replies(from: client)
        #expect(messages.count == 3)
        guard case let .response(list) = messages[1], case let .response(missing) = messages[2] else {
            Issue.record("expected two responses")
            return
        }
        #expect(list.requestID == 5 && list.status == .ok && list.isLast)
        let processes = try ControlBody.decode([ProcessSummary].self, from: list.body)
        #expect(processes.map(\.pid) == [42])
        #expect(missing.status == .notFound)
        #expect(try ControlBody.decode(ControlBody.Failure.self, from: missing.body).error.contains("nothing-like-this"))
    }

    private let emptySnapshot: [WireMessage] = [
        .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
    ]

    @Test func aFrameThatStallsMidWayIsClosedAtTheDeadline() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        try send([hello] + emptySnapshot, to: channel)
        // Six of the thirteen bytes of a heartbeat, then nothing.
        try channel.writeInbound(ByteBuffer(bytes: [0x09, 0, 0, 0, 0x1A, 1]))
        loop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        // The rest arrives in time: the frame completes, and the next one starts its own clock.
        try channel.writeInbound(ByteBuffer(bytes: [0, 0, 0, 0, 0, 0, 0]))
        try channel.writeInbound(ByteBuffer(bytes: [0x09, 0, 0]))
        loop.advanceTime(by: .seconds(9))
        #expect(channel.isActive)
        loop.advanceTime(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(hub.collector.processes().first?.endedNormally == false)
    }

    @Test func aPeerThatSaysNoHelloIsClosedAtTheDeadline() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        loop.advanceTime(by: .milliseconds(4_900))
        #expect(channel.isActive)
        loop.advanceTime(by: .milliseconds(200))
        #expect(!channel.isActive)
        #expect(hub.collector.processes().isEmpty)
    }

    @Test func theSessionEndsAtItsGoodbyeAndADisabledAgentEndsNormally() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(holdExit: true), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        try send(
            [hello, .defineString(DefineStringFrame(stringID: 1, value: "Flow"))] + emptySnapshot + [
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
                .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 1, objectIndex: 0, roleStringID: 0, typeNameStringID: 1)),
                .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 2, nodeID: 1)),
                .goodbye(.agentDisabled),
            ], to: channel)
        #expect(!channel.isActive)
        let summary = try #require(hub.collector.processes().first)
        #expect(summary.endedNormally == true)
        // The agent was switched off: it did not hold its exit, so the pending node is unverified.
        #expect(hub.collector.leaks(summary.session).map(\.verdict) == [.unverified])
    }

    @Test func aHostWithNothingAfterItsHelloLeavesNoProcess() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let channel = try makeChannel(hub: hub, loop: loop)
        try send([hello], to: channel)
        #expect(hub.collector.processes().count == 1)
        _ = try channel.finish()
        #expect(hub.collector.processes().isEmpty)
    }

    @Test func aRootPathThatMatchesNothingAndAnUnknownSubscriptionAreNotFound() throws {
        let loop = EmbeddedEventLoop()
        let hub = CollectorHub(settings: CollectorSettings(), eventLoop: loop, logger: Logger(label: "test"))
        let host = try makeChannel(hub: hub, loop: loop)
        try send([hello] + emptySnapshot, to: host)
        let client = try makeChannel(hub: hub, loop: loop)
        try send([
            .hello(Hello(role: .client, pid: 7, monotonicNanos: 0, wallNanos: 0, processName: "nodescope")),
            .request(ControlRequestFrame(requestID: 1, command: .tree, argument: "42", rootPath: "no/such")),
            .request(ControlRequestFrame(requestID: 2, command: .unsubscribe, argument: "99")),
            .request(ControlRequestFrame(requestID: 3, command: .unsubscribe, argument: "x")),
        ], to: client)
        let statuses = try replies(from: client).compactMap { message -> ResponseStatus? in
            if case let .response(response) = message { response.status } else { nil }
        }
        #expect(statuses == [.notFound, .notFound, .badRequest])
    }
}
