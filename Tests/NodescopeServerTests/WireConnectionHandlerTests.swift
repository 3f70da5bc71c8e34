import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeWire
import Testing

@testable import NodescopeServer

/// The connection handler through NIO's in-memory channel: bytes in, frames and collector
/// state out, no sockets.
@Suite("WireConnectionHandler over an EmbeddedChannel")
struct WireConnectionHandlerTests {
    @Test func aHostIsAcceptedAndItsTreeReachesTheCollector() throws {
        let collector = EmbeddedCollector(settings: CollectorSettings(holdExit: true))
        let channel = try collector.connect()
        try collector.send(
            [
                Frames.hostHello,
                .defineString(DefineStringFrame(stringID: 1, value: "Flow")),
                .defineString(DefineStringFrame(stringID: 2, value: "AppFlow")),
                .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)),
                .snapshotEnd(sequence: 0),
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 2)),
            ], to: channel, bytewise: true)
        guard case .helloAccepted(let accepted)? = try collector.replies(from: channel).first else {
            Issue.record("no helloAccepted")
            return
        }
        #expect(accepted.holdExit)
        #expect(collector.hub.collector.processes().map(\.processName) == ["app"])
        let session = try #require(collector.hub.collector.processes().first?.session)
        #expect(collector.hub.collector.tree(session)?.nodes.map(\.name) == ["AppFlow"])

        // The session ends at its goodbye, and the collector closes the connection.
        try collector.send([.goodbye(.normalExit)], to: channel, bytewise: true)
        #expect(!channel.isActive)
        #expect(collector.hub.collector.processes().first?.endedNormally == true)
    }

    @Test func aMalformedFrameClosesOnlyThatConnection() throws {
        let collector = EmbeddedCollector()
        let good = try collector.connect()
        let bad = try collector.connect()
        try collector.send([Frames.hostHello] + Frames.emptySnapshot, to: good, bytewise: true)
        try collector.send([Frames.hostHello] + Frames.emptySnapshot, to: bad, bytewise: true)
        // A length far beyond the limit: the decoder rejects it after the header.
        try bad.writeInbound(ByteBuffer(bytes: [0xFF, 0xFF, 0xFF, 0x7F, 0x13]))
        #expect(!bad.isActive)
        #expect(good.isActive)
        #expect(collector.hub.collector.processes().map { $0.endedNormally } == [nil, false])
    }

    @Test func aProtocolViolationClosesTheConnection() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect()
        // A node that names a string never defined.
        try collector.send(
            [
                Frames.hostHello, .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 7, nameStringID: 8)),
            ], to: channel, bytewise: true)
        #expect(!channel.isActive)
    }

    @Test func aClientGetsAnswersInJSON() throws {
        let collector = EmbeddedCollector()
        let host = try collector.connect()
        try collector.send([Frames.hostHello], to: host, bytewise: true)
        let client = try collector.connect()
        try collector.send(
            [
                Frames.clientHello,
                .request(ControlRequestFrame(requestID: 5, command: .listProcesses)),
                .request(ControlRequestFrame(requestID: 6, command: .tree, argument: "nothing-like-this")),
            ], to: client, bytewise: true)
        let messages = try collector.replies(from: client)
        #expect(messages.count == 3)
        guard case .response(let list) = messages[1], case .response(let missing) = messages[2] else {
            Issue.record("expected two responses")
            return
        }
        #expect(list.requestID == 5 && list.status == .ok && list.isLast)
        let processes = try ControlBody.decode([ProcessSummary].self, from: list.body)
        #expect(processes.map(\.pid) == [42])
        #expect(missing.status == .notFound)
        #expect(try ControlBody.decode(ControlBody.Failure.self, from: missing.body).error.contains("nothing-like-this"))
    }

    @Test func aFrameThatStallsMidWayIsClosedAtTheDeadline() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect()
        try collector.send([Frames.hostHello] + Frames.emptySnapshot, to: channel, bytewise: true)
        // Six of the thirteen bytes of a heartbeat, then nothing.
        try channel.writeInbound(ByteBuffer(bytes: [0x09, 0, 0, 0, 0x1A, 1]))
        collector.advance(by: .seconds(9))
        #expect(channel.isActive)
        // The rest arrives in time: the frame completes, and the next one starts its own clock.
        try channel.writeInbound(ByteBuffer(bytes: [0, 0, 0, 0, 0, 0, 0]))
        try channel.writeInbound(ByteBuffer(bytes: [0x09, 0, 0]))
        collector.advance(by: .seconds(9))
        #expect(channel.isActive)
        collector.advance(by: .seconds(2))
        #expect(!channel.isActive)
        #expect(collector.hub.collector.processes().first?.endedNormally == false)
    }

    @Test func aPeerThatSaysNoHelloIsClosedAtTheDeadline() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect()
        collector.advance(by: .milliseconds(4_900))
        #expect(channel.isActive)
        collector.advance(by: .milliseconds(200))
        #expect(!channel.isActive)
        #expect(collector.hub.collector.processes().isEmpty)
    }

    @Test func theSessionEndsAtItsGoodbyeAndADisabledAgentEndsNormally() throws {
        let collector = EmbeddedCollector(settings: CollectorSettings(holdExit: true))
        let channel = try collector.connect()
        try collector.send(
            [Frames.hostHello, .defineString(DefineStringFrame(stringID: 1, value: "Flow"))] + Frames.emptySnapshot + [
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
                .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 1, objectIndex: 0, roleStringID: 0, typeNameStringID: 1)),
                .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 2, nodeID: 1)),
                .goodbye(.agentDisabled),
            ], to: channel, bytewise: true)
        #expect(!channel.isActive)
        let summary = try #require(collector.hub.collector.processes().first)
        #expect(summary.endedNormally == true)
        // The agent was switched off: it did not hold its exit, so the pending node is unverified.
        #expect(collector.hub.collector.leaks(summary.session).map(\.verdict) == [.unverified])
    }

    @Test func aHostWithNothingAfterItsHelloLeavesNoProcess() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect()
        try collector.send([Frames.hostHello], to: channel, bytewise: true)
        #expect(collector.hub.collector.processes().count == 1)
        _ = try channel.finish()
        #expect(collector.hub.collector.processes().isEmpty)
    }

    @Test func aRootPathThatMatchesNothingAndAnUnknownSubscriptionAreNotFound() throws {
        let collector = EmbeddedCollector()
        let host = try collector.connect()
        try collector.send([Frames.hostHello] + Frames.emptySnapshot, to: host, bytewise: true)
        let client = try collector.connect()
        try collector.send(
            [
                Frames.clientHello,
                .request(ControlRequestFrame(requestID: 1, command: .tree, argument: "42", rootPath: "no/such")),
                .request(ControlRequestFrame(requestID: 2, command: .unsubscribe, argument: "99")),
                .request(ControlRequestFrame(requestID: 3, command: .unsubscribe, argument: "x")),
            ], to: client, bytewise: true)
        let statuses = try collector.replies(from: client).compactMap { message -> ResponseStatus? in
            if case .response(let response) = message { response.status } else { nil }
        }
        #expect(statuses == [.notFound, .notFound, .badRequest])
    }
}
