import Logging
import NIOCore
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeWire
import Testing

@testable import NodescopeServer

/// The retainers frame (protocol version 2) through a connection handler: refused on a
/// connection of version 1, ingested on one of version 2 and told to subscribers.
@Suite("Retainers frames over an EmbeddedChannel")
struct RetainersOverTheWireTests {
    static func hello(version: UInt16) -> WireMessage {
        .hello(Hello(protocolVersion: version, role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"))
    }

    /// A node (7) with a flow and a context, detached at 1 s, its grace run out by a heartbeat.
    static let leakedNode: [WireMessage] =
        [
            .defineString(DefineStringFrame(stringID: 1, value: "ProfileFlow")),
            .defineString(DefineStringFrame(stringID: 2, value: "context")),
        ] + Frames.emptySnapshot + [
            .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 7, parentID: 0, kindStringID: 1, nameStringID: 0)),
            .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 7, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
            .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 1_000_000_000, nodeID: 7)),
            .heartbeat(monotonicNanos: 2_100_000_000),
        ]

    static let frame = RetainersFrame(
        nodeID: 7, objectIndex: 0, verdict: .holder,
        hops: [
            RetainerHop(holderKind: .global, holder: "main.session", reference: ""),
            RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
            RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
        ])

    @Test func aVersion1HostThatSendsRetainersIsClosed() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect()
        try collector.send([Self.hello(version: 1)] + Self.leakedNode, to: channel)
        guard case .helloAccepted(let accepted)? = try collector.replies(from: channel).first else {
            Issue.record("no helloAccepted")
            return
        }
        #expect(accepted.protocolVersion == 1, "the connection speaks the peer's version")
        try collector.send([.retainers(Self.frame)], to: channel)
        #expect(!channel.isActive)
        #expect(collector.hub.collector.processes().first?.endedNormally == false)
        #expect(
            collector.logLines(atLeast: .debug).contains { $0.contains("retainers frames need protocol version 2") },
            "\(collector.logLines(atLeast: .debug))")
        let session = try #require(collector.hub.collector.processes().first?.session)
        #expect(collector.hub.collector.leaks(session).first?.retainers == [])
    }

    @Test func aVersion2HostsRetainersReachTheTreeTheRecordAndSubscribers() throws {
        let collector = EmbeddedCollector()
        let host = try collector.connect()
        try collector.send([Self.hello(version: 2)] + Self.leakedNode, to: host, bytewise: true)
        guard case .helloAccepted(let accepted)? = try collector.replies(from: host).first else {
            Issue.record("no helloAccepted")
            return
        }
        #expect(accepted.protocolVersion == 2)
        let session = try #require(collector.hub.collector.processes().first?.session)
        #expect(collector.hub.collector.leaks(session).map(\.verdict) == [.leaked])

        let client = try collector.connect()
        try collector.send([Frames.clientHello, Frames.request(1, .subscribe, "42")], to: client)
        _ = try collector.replies(from: client)

        try collector.send([.retainers(Self.frame)], to: host, bytewise: true)
        #expect(host.isActive)
        let path = RetainerPath(Self.frame)
        #expect(collector.hub.collector.tree(session)?.nodes.first?.retainers == [path])
        let record = try #require(collector.hub.collector.leaks(session).first)
        #expect(record.retainers == [path])

        let events = try collector.replies(from: client).compactMap { message -> TreeChange? in
            guard case .event(let event) = message else { return nil }
            return try? ControlBody.decode(TreeChange.self, from: event.body)
        }
        #expect(events == [.retainersFound(id: 7, path: path, record: record)])

        // The control API's answers carry the paths as data.
        try collector.send([Frames.request(2, .leaks, "42")], to: client)
        let body = try collector.replies(from: client).compactMap { message -> [UInt8]? in
            if case .response(let response) = message { response.body } else { nil }
        }.joined()
        let records = try ControlBody.decode([LeakRecord].self, from: Array(body))
        #expect(records.first?.retainers == [path])
        #expect(String(decoding: body, as: UTF8.self).contains("\"isSuspect\":true"))
    }
}
