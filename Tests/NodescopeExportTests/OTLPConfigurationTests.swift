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

    private func url(_ configuration: OTLPConfiguration?, _ signal: OTLPConfiguration.Signal = .logs) -> String? {
        configuration?.target(signal)?.url
    }

    @Test func theBaseURLGetsTheSignalsPathAndTheSignalsOwnURLIsTakenAsItIs() throws {
        #expect(url(try resolve("http://collector:4318", [:])) == "http://collector:4318/v1/logs")
        #expect(url(try resolve("http://collector:4318", [:]), .traces) == "http://collector:4318/v1/traces")
        #expect(url(try resolve("http://collector:4318", [:]), .metrics) == "http://collector:4318/v1/metrics")
        #expect(url(try resolve("https://collector:4318/otlp/", [:])) == "https://collector:4318/otlp/v1/logs")
        #expect(url(try resolve(["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"])) == "http://c:4318/v1/logs")
        let both = ["OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT": "http://l:9/in"]
        #expect(url(try resolve(both)) == "http://l:9/in")
        #expect(url(try resolve(both), .traces) == "http://c:4318/v1/traces")
        // The option wins over every variable.
        #expect(url(try resolve("http://option:1", both)) == "http://option:1/v1/logs")
        // A signal's own endpoint alone sends that signal alone.
        #expect(try resolve(["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://t:1/x"])?.signals == [.traces])
    }

    @Test func aSignalIsLeftOutWithItsExporterSetToNone() throws {
        let configuration = try resolve(
            "http://c:4318", ["OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "otlp", "OTEL_LOGS_EXPORTER": " otlp "])
        #expect(configuration?.signals == [.logs, .metrics])
        #expect(
            try resolve("http://c:4318", ["OTEL_LOGS_EXPORTER": "none", "OTEL_TRACES_EXPORTER": "none", "OTEL_METRICS_EXPORTER": "none"])
                == nil)
        #expect(try resolve("http://c:4318", [:])?.metricIntervalMilliseconds == 60_000)
        #expect(try resolve("http://c:4318", ["OTEL_METRIC_EXPORT_INTERVAL": "1000"])?.metricIntervalMilliseconds == 1_000)
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
        let logs = try #require(configuration.target(.logs))
        let traces = try #require(configuration.target(.traces))
        #expect(logs.timeoutMilliseconds == 300)
        #expect(traces.timeoutMilliseconds == 2_000)
        #expect(logs.headers == [.init(name: "x-team", value: "mobile"), .init(name: "API-KEY", value: "logs")])
        #expect(traces.headers == [.init(name: "api-key", value: "a=b"), .init(name: "x-team", value: "mobile")])
        #expect(configuration.serviceName == "shop")
        #expect(configuration.resourceAttributes == [.init(name: "team", value: "mobile"), .init(name: "env", value: "ci linux")])
        #expect(try resolve("http://c:4318", [:])?.target(.metrics)?.timeoutMilliseconds == 500)
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
            ("http://c:4318", ["OTEL_TRACES_EXPORTER": "zipkin"], "only otlp or none"),
            ("http://c:4318", ["OTEL_EXPORTER_OTLP_METRICS_PROTOCOL": "http/json"], "only http/protobuf"),
            ("http://c:4318", ["OTEL_METRIC_EXPORT_INTERVAL": "soon"], "give milliseconds"),
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
