import Foundation
import NodescopeControl
import NodescopeWire
import Testing

@testable import NodescopeServer

#if canImport(Glibc)
import Glibc

/// The explain deadline on a real server and sockets, when the collector's one loop is busy.
@Suite("An explain answer while the collector's loop is busy")
struct BusyLoopExplainTests {
    /// The loop busy past the explain deadline (another client's big answer) while the host's
    /// answer waits in its socket: the deadline's task comes due during that work and runs
    /// before the loop reads the socket. The client gets the host's answer, not "the process did
    /// not answer" (the daemon, not the host, was slow).
    @Test func anAnswerWaitingWhileTheLoopWasBusyReachesTheClient() async throws {
        // On a machine so loaded that this test's own turns outlast the deadline, an attempt
        // cannot show anything (the client was rightly answered first), and is made again.
        for attempt in 1...4 {
            if let status = try await attemptBusyLoopExplain(deadlineSeconds: 2 * attempt) {
                #expect(status == .ok)
                return
            }
        }
        print("BusyLoopExplainTests: not shown, the loop could not be reached within the deadline in 4 attempts")
    }

    private func attemptBusyLoopExplain(deadlineSeconds: Int) async throws -> ResponseStatus? {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("ns-busyx-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("d.sock").path
        let deadline = Int64(deadlineSeconds) * 1_000_000_000
        let server = CollectorServer(socketPath: path, limits: ServerLimits(explainDeadlineNanos: deadline))
        try await server.start()
        let status: ResponseStatus?
        do {
            status = try await exchange(with: server, at: path, deadline: deadline)
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
        return status
    }

    /// A host and a client of `server`; the client asks, and the host answers while the loop is
    /// busy past `deadline`. The status of the client's answer, or nil when the client was
    /// answered before the loop could be made busy.
    private func exchange(with server: CollectorServer, at path: String, deadline: Int64) async throws -> ResponseStatus? {
        let host = try #require(TestPeer(path: path))
        let client = try #require(TestPeer(path: path))
        defer {
            host.close()
            client.close()
        }
        let hello = WireMessage.hello(
            Hello(protocolVersion: WireLimits.protocolVersion, role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"))
        host.send([hello] + ExplainOverTheWireTests.detachedNode)
        try #require(host.read(within: 10).contains { if case .helloAccepted = $0 { true } else { false } })
        client.send([Frames.clientHello])
        try #require(client.read(within: 10).contains { if case .helloAccepted = $0 { true } else { false } })
        client.send([ExplainOverTheWireTests.explain(5, "ProfileFlow")])
        let question = try #require(
            host.read(within: 10).lazy.compactMap { message -> ExplainFrame? in
                if case .explain(let frame) = message { frame } else { nil }
            }.first)

        // Work on the loop past the deadline; the host answers meanwhile (from the loop's own
        // thread, unless the client was answered already).
        var answer: [UInt8] = []
        var encoder = FrameEncoder()
        encoder.encode(.retainers(ExplainOverTheWireTests.path), into: &answer)
        encoder.encode(.explained(ExplainedFrame(requestID: question.requestID, outcome: .explained, objectCount: 1)), into: &answer)
        let bytes = answer
        let busyMicros = UInt32(deadline / 1_000 * 8 / 5)
        let (clientFD, hostFD) = (client.descriptor, host.descriptor)
        let answered = try await server.withCollector { _ -> Bool in
            var byte: UInt8 = 0
            guard recv(clientFD, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) < 0, errno == EAGAIN else { return false }
            usleep(busyMicros)
            return send(hostFD, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
        }
        guard answered else { return nil }
        for message in client.read(within: 20) {
            if case .response(let response) = message, response.requestID == 5 { return response.status }
        }
        Issue.record("the client got no answer")
        return .internalError
    }
}

#endif
