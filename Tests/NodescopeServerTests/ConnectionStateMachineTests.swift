import NodescopeWire
import Testing

@testable import NodescopeServer

@Suite("ConnectionStateMachine: what each message means, without I/O")
struct ConnectionStateMachineTests {
    private func hello(_ role: PeerRole, version: UInt16 = WireLimits.protocolVersion) -> WireMessage {
        .hello(Hello(protocolVersion: version, role: role, pid: 1, monotonicNanos: 0, wallNanos: 0, processName: "p"))
    }

    @Test func aHostIsAcceptedThenStreamsAndSaysGoodbye() {
        var machine = ConnectionStateMachine()
        guard case .acceptHost = machine.received(hello(.host)) else {
            Issue.record("a host hello is accepted")
            return
        }
        #expect(machine.received(.snapshotEnd(sequence: 1)) == .ingest(.snapshotEnd(sequence: 1)))
        #expect(machine.received(.heartbeat(monotonicNanos: 3)) == .ingest(.heartbeat(monotonicNanos: 3)))
        // The goodbye goes to the collector too, which checks where it stands (not in a snapshot).
        #expect(machine.received(.goodbye(.normalExit)) == .ingest(.goodbye(.normalExit)))
        #expect(machine.state == .host(version: WireLimits.protocolVersion, goodbye: .normalExit))
        guard case .close = machine.received(.dropped(count: 1)) else {
            Issue.record("nothing may follow a goodbye")
            return
        }
    }

    @Test func aFirstFrameOtherThanHelloIsRefusedAsABadHandshake() {
        var machine = ConnectionStateMachine()
        guard case .refuse(let code, let reason) = machine.received(.dropped(count: 1)) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(code == .badHandshake)
        #expect(reason.contains("must be a hello"))
        #expect(machine.state == .closed)
    }

    @Test func aHelloThatCannotBeDecodedIsRefusedByItsAnnouncedVersion() {
        var machine = ConnectionStateMachine()
        let error = WireError(.unsupportedVersion, "hello names protocol version 4; this side speaks versions 1 to 3")
        guard case .refuse(let code, let reason) = machine.undecodableFirstFrame(error, announcedVersion: 4) else {
            Issue.record("expected a refusal")
            return
        }
        #expect(code == .versionUnsupported)
        #expect(reason == "this collector speaks protocol versions 1 to 3, the peer sent 4")
        var other = ConnectionStateMachine()
        guard case .refuse(let badCode, _) = other.undecodableFirstFrame(WireError(.badMagic, "bad"), announcedVersion: nil)
        else {
            Issue.record("expected a refusal")
            return
        }
        #expect(badCode == .badHandshake)
    }

    @Test func anotherProtocolVersionIsRefusedWithAReason() {
        var machine = ConnectionStateMachine()
        guard case .refuse(let code, let reason) = machine.received(hello(.host, version: 9)) else {
            Issue.record("expected refusal")
            return
        }
        #expect(code == .versionUnsupported)
        #expect(reason.contains("9"))
    }

    @Test func rolesCannotSpeakForEachOther() {
        var host = ConnectionStateMachine()
        _ = host.received(hello(.host))
        let request = ControlRequestFrame(requestID: 1, command: .listProcesses)
        guard case .close = host.received(.request(request)) else {
            Issue.record("a host may not send requests")
            return
        }
        var client = ConnectionStateMachine()
        guard case .acceptClient = client.received(hello(.client)) else {
            Issue.record("a client hello is accepted")
            return
        }
        #expect(client.received(.request(request)) == .request(request))
        guard case .close = client.received(.dropped(count: 2)) else {
            Issue.record("a client may not send host frames")
            return
        }
        guard case .close = client.received(hello(.client)) else {
            Issue.record("a second hello closes the connection")
            return
        }
    }
}
