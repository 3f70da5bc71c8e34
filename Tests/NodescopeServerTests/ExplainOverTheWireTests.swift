import Logging
import NIOCore
import NIOEmbedded
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeWire
import Testing

@testable import NodescopeServer

/// `explain` (protocol version 2): a client asks, the collector passes the question to the
/// host, the host's retainers frames and its `explained` end become the client's answer.
@Suite("Explain requests over EmbeddedChannels")
struct ExplainOverTheWireTests {
    /// A node 7 (`ProfileFlow`, one context) detached at 1 s, its grace not run out, and an
    /// attached node 8 of the same name.
    static let detachedNode: [WireMessage] =
        [
            .defineString(DefineStringFrame(stringID: 1, value: "ProfileFlow")),
            .defineString(DefineStringFrame(stringID: 2, value: "context")),
        ] + Frames.emptySnapshot + [
            .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 7, parentID: 0, kindStringID: 1, nameStringID: 0)),
            .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 7, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
            .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 1_000_000_000, nodeID: 7)),
            .nodeAttached(NodeAttachedFrame(sequence: 4, timeNanos: 2, nodeID: 8, parentID: 0, kindStringID: 1, nameStringID: 0)),
        ]

    static let path = RetainersFrame(
        nodeID: 7, objectIndex: 0, verdict: .cycle,
        hops: [
            RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 7, holder: "ProfileContextImp", reference: ".session"),
            RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
        ])

    /// A collector with a version-`version` host (pid 42) that sent ``detachedNode``, and a client.
    static func connected(version: UInt16 = 2) throws -> (EmbeddedCollector, host: EmbeddedChannel, client: EmbeddedChannel) {
        let collector = EmbeddedCollector()
        let host = try collector.connect()
        let hello = WireMessage.hello(
            Hello(protocolVersion: version, role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"))
        try collector.send([hello] + detachedNode, to: host)
        _ = try collector.replies(from: host)
        let client = try collector.connect()
        try collector.send([Frames.clientHello], to: client)
        _ = try collector.replies(from: client)
        return (collector, host, client)
    }

    static func explain(_ id: UInt32, _ path: String) -> WireMessage {
        .request(ControlRequestFrame(requestID: id, command: .explain, argument: "42", rootPath: path))
    }

    /// The responses to request `id`, as status and joined body.
    static func answer(_ id: UInt32, from client: EmbeddedChannel, of collector: EmbeddedCollector) throws -> (
        ResponseStatus, [UInt8]
    )? {
        var status: ResponseStatus?
        var body: [UInt8] = []
        for case .response(let response) in try collector.replies(from: client) where response.requestID == id {
            status = response.status
            body += response.body
        }
        return status.map { ($0, body) }
    }

    @Test func theHostIsAskedAboutTheDetachedNodeAndItsAnswerReachesTheClient() throws {
        let (collector, host, client) = try Self.connected()
        try collector.send([Self.explain(5, "ProfileFlow")], to: client)
        // Only the detached one of the two nodes named ProfileFlow is asked about.
        let asked = try collector.replies(from: host)
        guard case .explain(let question)? = asked.first, asked.count == 1 else {
            Issue.record("the host got \(asked)")
            return
        }
        #expect(question.nodeIDs == [7])
        #expect(try Self.answer(5, from: client, of: collector) == nil, "no answer before the host's")

        try collector.send(
            [.retainers(Self.path), .explained(ExplainedFrame(requestID: question.requestID, outcome: .explained, objectCount: 1))],
            to: host, bytewise: true)
        let (status, body) = try #require(try Self.answer(5, from: client, of: collector))
        #expect(status == .ok)
        let explanation = try ControlBody.decode(ControlBody.Explanation.self, from: body)
        #expect(explanation.outcome == "explained")
        #expect(explanation.nodes.map(\.id) == [7])
        #expect(explanation.paths == [["ProfileFlow"]])
        #expect(explanation.nodes.first?.status == .detached, "its grace has not run out")
        #expect(explanation.nodes.first?.retainers == [RetainerPath(Self.path)])
        #expect(host.isActive)
    }

    @Test func aSecondQuestionWhileTheFirstIsOpenIsUnavailableAndALateAnswerIsDropped() throws {
        let (collector, host, client) = try Self.connected()
        try collector.send([Self.explain(1, "ProfileFlow"), Self.explain(2, "ProfileFlow")], to: client)
        let (status, body) = try #require(try Self.answer(2, from: client, of: collector))
        #expect(status == .unavailable)
        #expect(String(decoding: body, as: UTF8.self).contains("answering another explain request"))
        guard case .explain(let question)? = try collector.replies(from: host).first else {
            Issue.record("the host was not asked")
            return
        }
        // The deadline answers the client; the host's answer after it changes nothing.
        collector.advance(by: .nanoseconds(ServerLimits().explainDeadlineNanos))
        let (late, lateBody) = try #require(try Self.answer(1, from: client, of: collector))
        #expect(late == .unavailable)
        #expect(String(decoding: lateBody, as: UTF8.self).contains("did not answer within 30 s"))
        try collector.send([.explained(ExplainedFrame(requestID: question.requestID, outcome: .explained))], to: host)
        #expect(try Self.answer(1, from: client, of: collector) == nil)
        #expect(host.isActive, "a late answer is no violation")
    }

    @Test func aHostThatEndsAnswersItsOpenQuestionAsUnavailable() throws {
        let (collector, host, client) = try Self.connected()
        try collector.send([Self.explain(3, "ProfileFlow")], to: client)
        _ = try host.close().wait()
        let (status, body) = try #require(try Self.answer(3, from: client, of: collector))
        #expect(status == .unavailable)
        #expect(String(decoding: body, as: UTF8.self).contains("ended before its analysis was done"))
    }

    @Test func questionsThatCannotBeAskedAreAnsweredAtOnce() throws {
        let (collector, host, client) = try Self.connected(version: 1)
        let cases: [(String, ResponseStatus, String)] = [
            ("ProfileFlow", .unavailable, "protocol version 1"),
            ("Nothing/There", .notFound, "no node at Nothing"),
            ("", .badRequest, "needs the path of a node"),
        ]
        for (index, (path, expected, words)) in cases.enumerated() {
            try collector.send([Self.explain(UInt32(index), path)], to: client)
            let (status, body) = try #require(try Self.answer(UInt32(index), from: client, of: collector))
            #expect(status == expected, "\(path)")
            #expect(String(decoding: body, as: UTF8.self).contains(words), "\(String(decoding: body, as: UTF8.self))")
        }
        #expect(try collector.replies(from: host).isEmpty, "a version-1 host is never sent an explain frame")
    }

    @Test func anAttachedNodeIsNotExplained() throws {
        let (collector, host, client) = try Self.connected()
        try collector.send(
            [.nodeAttached(NodeAttachedFrame(sequence: 5, timeNanos: 3, nodeID: 9, parentID: 8, kindStringID: 2, nameStringID: 0))],
            to: host)
        try collector.send([Self.explain(4, "ProfileFlow/context")], to: client)
        let (status, body) = try #require(try Self.answer(4, from: client, of: collector))
        #expect(status == .badRequest)
        #expect(String(decoding: body, as: UTF8.self).contains("is attached"))
    }

    @Test func aHostThatSendsExplainOrExplainedOnVersion1IsClosed() throws {
        for (version, message) in [
            (UInt16(2), WireMessage.explain(ExplainFrame(requestID: 1, nodeIDs: [7]))),
            (1, .explained(ExplainedFrame(requestID: 1, outcome: .explained))),
        ] {
            let (collector, host, _) = try Self.connected(version: version)
            try collector.send([message], to: host)
            #expect(!host.isActive, "\(message) on version \(version)")
        }
    }
}
