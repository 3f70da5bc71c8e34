#if Export
import Testing

@testable import NodescopeExport

/// On loopback, only requests that name this server in their `Host` are served: a page whose
/// name was rebound to 127.0.0.1 sends its own name.
@Suite struct MetricsGateTests {
    @Test func loopbackNamesOfThePortAreServed() {
        for authority in ["127.0.0.1:9464", "localhost:9464", "LOCALHOST:9464", "[::1]:9464"] {
            #expect(MetricsGate.refusal(authority: authority, port: 9_464) == nil, "\(authority)")
        }
    }

    @Test func otherNamesAndOtherPortsAreRefusedWithTheirReason() throws {
        for authority in ["rebound.example:9464", "127.0.0.1:9465", "127.0.0.1", ""] {
            let reason = try #require(MetricsGate.refusal(authority: authority, port: 9_464), "\(authority)")
            #expect(reason.contains("is not this server's (127.0.0.1:9464)"))
        }
        #expect(MetricsGate.refusal(authority: nil, port: 9_464)?.contains("(none)") == true)
    }
}
#endif
