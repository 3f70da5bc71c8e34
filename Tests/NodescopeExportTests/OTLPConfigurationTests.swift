import Testing

@testable import NodescopeExport

/// `--otlp-endpoint` and the OTEL_* variables, read as OpenTelemetry's SDKs read them.
@Suite struct OTLPConfigurationTests {
    private func resolve(_ endpoint: String?, _ environment: [String: String]) throws(OTLPConfiguration.Problem) -> OTLPConfiguration? {
        try OTLPConfiguration.resolve(endpoint: endpoint, environment: environment, defaultTimeoutMilliseconds: 500)
    }

    private func resolve(_ environment: [String: String]) throws(OTLPConfiguration.Problem) -> OTLPConfiguration? {
        try resolve(nil, environment)
    }

    @Test func noEndpointIsNoExport() throws {
        #expect(try resolve([:]) == nil)
        #expect(try resolve(["OTEL_SERVICE_NAME": "app", "OTEL_EXPORTER_OTLP_ENDPOINT": ""]) == nil)
        #expect(try resolve("http://collector:4318", ["OTEL_SDK_DISABLED": "TRUE"]) == nil)
    }

    @Test func theBaseURLGetsTheSignalsPathAndTheSignalsOwnURLIsTakenAsItIs() throws {
        #expect(try resolve("http://collector:4318", [:])?.logsURL == "http://collector:4318/v1/logs")
        #expect(try resolve("https://collector:4318/otlp/", [:])?.logsURL == "https://collector:4318/otlp/v1/logs")
        #expect(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"])?.logsURL == "http://c:4318/v1/logs")
        let both = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l:9/in"]
        #expect(try resolve(both)?.logsURL == "http://l:9/in")
        // The option wins over every variable.
        #expect(try resolve("http://option:1", both)?.logsURL == "http://option:1/v1/logs")
    }

    @Test func timeoutsHeadersAndResourceAttributes() throws {
        let configuration = try #require(
            try resolve(
                "http://c:4318",
                [
                    "OTEL_EXPORTER_OTLP_TIMEOUT": "2000", "OTEL_EXPORTER_OTLP_LOGS_TIMEOUT": "300",
                    "OTEL_EXPORTER_OTLP_HEADERS": "api-key=a%3Db, x-team = mobile ",
                    "OTEL_EXPORTER_OTLP_LOGS_HEADERS": "API-KEY=logs",
                    "OTEL_SERVICE_NAME": "shop", "OTEL_RESOURCE_ATTRIBUTES": "team=mobile,env=ci%20linux,,",
                ]))
        #expect(configuration.timeoutMilliseconds == 300)
        #expect(configuration.headers == [.init(name: "x-team", value: "mobile"), .init(name: "API-KEY", value: "logs")])
        #expect(configuration.serviceName == "shop")
        #expect(configuration.resourceAttributes == [.init(name: "team", value: "mobile"), .init(name: "env", value: "ci linux")])
        #expect(try resolve("http://c:4318", [:])?.timeoutMilliseconds == 500)
    }

    @Test func settingsThatCannotWorkAreRefusedInWords() {
        let refused: [(String?, [String: String], String)] = [
            ("ftp://c:21", [:], "give an http:// or https:// URL"),
            ("http://", [:], "give a host"),
            ("http://me:secret@c:4318", [:], "no user or password"),
            ("http://c:4318/a b", [:], "spaces or control characters"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"], "only http/protobuf"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_TIMEOUT": "0"], "give milliseconds"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_TIMEOUT": "10s"], "give milliseconds"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_HEADERS": "key=%zz"], "OTEL_EXPORTER_OTLP_HEADERS"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_HEADERS": "bad name=x"], "OTEL_EXPORTER_OTLP_HEADERS"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_HEADERS": "key=a\r\nInjected: yes"], "OTEL_EXPORTER_OTLP_HEADERS"),
            ("http://c:4318", ["OTEL_RESOURCE_ATTRIBUTES": "novalue"], "OTEL_RESOURCE_ATTRIBUTES"),
        ]
        for (endpoint, environment, words) in refused {
            #expect(throws: OTLPConfiguration.Problem.self, "\(endpoint ?? "") \(environment)") {
                try resolve(endpoint, environment)
            }
            do throws(OTLPConfiguration.Problem) {
                _ = try resolve(endpoint, environment)
            } catch {
                #expect(error.description.contains(words), "\(error.description)")
                // A header's value may be a secret: the message never repeats it.
                #expect(!error.description.contains("%zz") && !error.description.contains("Injected"))
            }
        }
        #expect(OTLPConfiguration.pairs("a=1,b=2") == [.init(name: "a", value: "1"), .init(name: "b", value: "2")])
        #expect(OTLPConfiguration.pairs("=1") == nil)
    }

    @Test func aCheckRunNamesItsCommandAndTheCIsRepositoryBranchAndCommit() {
        let github = CheckRunResource.attributes(
            command: ["swift", "test"],
            environment: [
                "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "team/app", "GITHUB_REF_NAME": "12/merge",
                "GITHUB_HEAD_REF": "feature", "GITHUB_SHA": "abc", "GITHUB_RUN_ID": "7",
            ])
        #expect(
            github == [
                .init(name: "nodescope.check.command", value: "swift test"),
                .init(name: "vcs.repository.url.full", value: "https://github.com/team/app"),
                .init(name: "vcs.ref.head.name", value: "feature"), .init(name: "vcs.ref.head.revision", value: "abc"),
                .init(name: "cicd.pipeline.run.id", value: "7"),
            ])
        let gitlab = CheckRunResource.attributes(
            command: ["make"], environment: ["CI_PROJECT_URL": "https://gitlab.example/g/p", "CI_COMMIT_REF_NAME": "main"])
        #expect(gitlab.map(\.name) == ["nodescope.check.command", "vcs.repository.url.full", "vcs.ref.head.name"])
        #expect(CheckRunResource.attributes(command: ["x"], environment: [:]).count == 1)
    }
}
