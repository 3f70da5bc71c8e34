import Testing

@testable import NodescopeExport

/// `daemon --metrics ADDRESS`: loopback unless another address is named.
@Suite struct MetricsAddressTests {
    @Test func aPortAloneIsOnLoopback() throws {
        let address = try #require(MetricsAddress(parsing: "9464"))
        #expect(address == MetricsAddress(host: "127.0.0.1", port: 9_464))
        #expect(address.isLoopback && !address.isWildcard)
        #expect(address.description == "127.0.0.1:9464")
    }

    @Test func hostsAndBracketedIPv6() throws {
        #expect(MetricsAddress(parsing: "localhost:0") == MetricsAddress(host: "localhost", port: 0))
        #expect(MetricsAddress(parsing: "[::1]:9464") == MetricsAddress(host: "::1", port: 9_464))
        #expect(MetricsAddress(parsing: "[::1]:9464")?.description == "[::1]:9464")
        #expect(MetricsAddress(parsing: "[::1]:9464")?.isLoopback == true)
        let wildcard = try #require(MetricsAddress(parsing: "0.0.0.0:9464"))
        #expect(wildcard.isWildcard && !wildcard.isLoopback)
        #expect(MetricsAddress(parsing: "metrics.internal:80")?.isLoopback == false)
    }

    @Test func anythingElseIsRefused() {
        for text in [
            "", ":", "9464:", ":9464", "65536", "-1", "127.0.0.1:x", "::1:9464", "[::1]", "[::1]9464", "a b:1", "host/path:1",
            "127.0.0.1:123456", "[::1:9464",
        ] {
            #expect(MetricsAddress(parsing: text) == nil, "\(text)")
        }
    }
}
