@testable import NodescopeServer
import NodescopeWire
import Testing

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
        #expect(machine.received(.heartbeat(monotonicNanos: 3)) == .ignore)
        #expect(!machine.endedNormally)
        #expect(machine.received(.goodbye(.normalExit)) == .goodbye(.normalExit))
        #expect(machine.endedNormally)
        guard case .close = machine.received(.dropped(count: 1)) else {
            Issue.record("nothing may follow a goodbye")
            return
        }
    }

    @Test func everythingBeforeHelloClosesTheConnection() {
        var machine = ConnectionStateMachine()
        guard case let .close(reason) = machine.received(.dropped(count: 1)) else {
            Issue.record("expected close")
            return
        }
        #expect(reason.contains("expected hello"))
        #expect(machine.state == .closed)
    }

    @Test func anotherProtocolVersionIsRefusedWithAReason() {
        var machine = ConnectionStateMachine()
        guard case let .refuse(code, reason) = machine.received(hello(.host, version: 9)) else {
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
        #expect(client.received(hello(.client)) == .acceptClient)
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
