#if Export
import NodescopeCollector
import Testing

@testable import NodescopeExport

/// The daemon's counts in Prometheus' text format, read back line by line as a scraper reads
/// them: every sample belongs to a family with its HELP and TYPE, values are the snapshot's,
/// and a hostile process name stays inside its label.
@Suite struct PrometheusExpositionTests {
    /// One sample line: `name{labels} value`.
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        var value: Double
    }

    /// Reads an exposition strictly: comments are HELP or TYPE, every other line a sample whose
    /// label values are quoted with `\\`, `\"` and `\n` escaped.
    static func parse(_ text: String) throws -> (samples: [Sample], help: [String: String], type: [String: String]) {
        var samples: [Sample] = []
        var help: [String: String] = [:]
        var type: [String: String] = [:]
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("# HELP ") {
                let rest = line.dropFirst(7)
                let name = String(rest.prefix { $0 != " " })
                help[name] = String(rest.dropFirst(name.count + 1))
                continue
            }
            if line.hasPrefix("# TYPE ") {
                let parts = line.dropFirst(7).split(separator: " ")
                try #require(parts.count == 2, "\(line)")
                type[String(parts[0])] = String(parts[1])
                continue
            }
            try #require(!line.hasPrefix("#"), "an unknown comment: \(line)")
            var characters = Substring(line)
            let name = String(characters.prefix { $0.isLetter || $0.isNumber || $0 == "_" || $0 == ":" })
            characters = characters.dropFirst(name.count)
            var labels: [String: String] = [:]
            if characters.first == "{" {
                characters = characters.dropFirst()
                while characters.first != "}" {
                    let label = String(characters.prefix { $0 != "=" })
                    characters = characters.dropFirst(label.count)
                    try #require(characters.hasPrefix("=\""), "\(line)")
                    characters = characters.dropFirst(2)
                    var value = ""
                    while let next = characters.first, next != "\"" {
                        characters = characters.dropFirst()
                        if next == "\\" {
                            let escaped = try #require(characters.first, "\(line)")
                            characters = characters.dropFirst()
                            switch escaped {
                            case "\\": value.append("\\")
                            case "\"": value.append("\"")
                            case "n": value.append("\n")
                            default: Issue.record("an unknown escape \\\(escaped) in \(line)")
                            }
                        } else {
                            value.append(next)
                        }
                    }
                    try #require(characters.first == "\"", "\(line)")
                    characters = characters.dropFirst()
                    labels[label] = value
                    if characters.first == "," { characters = characters.dropFirst() }
                }
                characters = characters.dropFirst()
            }
            try #require(characters.first == " ", "\(line)")
            let value = try #require(Double(characters.dropFirst()), "\(line)")
            samples.append(Sample(name: name, labels: labels, value: value))
        }
        return (samples, help, type)
    }

    static func process(
        _ session: UInt64, name: String, pid: UInt32, connected: Bool, counts: NodeCounts, events: UInt64 = 0, dropped: UInt64 = 0
    ) -> ProcessSummary {
        ProcessSummary(
            session: SessionID(rawValue: session), pid: pid, processName: name, connectedAtNanos: 1,
            endedAtNanos: connected ? nil : 2, endedNormally: connected ? nil : false, liveNodes: counts.attached,
            leaks: counts.leaked, eventsIngested: events, droppedReported: dropped, counts: counts,
            end: connected ? nil : .abnormal)
    }

    @Test func everyProcessCountIsASampleOfItsFamilyWithHelpAndType() throws {
        let snapshot = ExportSnapshot(
            processes: [
                Self.process(
                    7, name: "Shop", pid: 4_100, connected: true,
                    counts: NodeCounts(attached: 12, awaitingRelease: 1, leaked: 2, retainedByGlobal: 1, unverified: 0, releasedLate: 3),
                    events: 480, dropped: 9),
                Self.process(3, name: "Shop", pid: 3_900, connected: false, counts: NodeCounts(attached: 0, unverified: 4)),
            ],
            daemon: .init(
                hosts: 1, clients: 2, recordings: 1, failedRecordings: 5,
                otlp: [.init(signal: "logs", sent: 6, dropped: 1), .init(signal: "traces", sent: 300, dropped: 0)]))
        let (samples, help, type) = try Self.parse(PrometheusExposition.text(of: snapshot))
        func value(_ name: String, _ labels: [String: String]) -> Double? {
            samples.first { $0.name == name && $0.labels == labels }?.value
        }
        let live = ["process": "Shop", "pid": "4100", "session": "7"]
        let ended = ["process": "Shop", "pid": "3900", "session": "3"]
        #expect(value("nodescope_process_live_nodes", live) == 12)
        #expect(value("nodescope_process_awaiting_release_nodes", live) == 1)
        #expect(value("nodescope_process_leaks", live.merging(["verdict": "leaked"]) { $1 }) == 2)
        #expect(value("nodescope_process_leaks", live.merging(["verdict": "retained_by_global"]) { $1 }) == 1)
        #expect(value("nodescope_process_leaks", live.merging(["verdict": "released_late"]) { $1 }) == 3)
        #expect(value("nodescope_process_leaks", ended.merging(["verdict": "unverified"]) { $1 }) == 4)
        #expect(value("nodescope_process_events_ingested_total", live) == 480)
        #expect(value("nodescope_process_events_dropped_total", live) == 9)
        #expect(value("nodescope_process_connected", live) == 1)
        #expect(value("nodescope_process_connected", ended) == 0)
        #expect(value("nodescope_process_ended", ended.merging(["end": "abnormal"]) { $1 }) == 1)
        #expect(!samples.contains { $0.name == "nodescope_process_ended" && $0.labels["session"] == "7" })
        #expect(value("nodescope_connections", ["kind": "host"]) == 1)
        #expect(value("nodescope_connections", ["kind": "client"]) == 2)
        #expect(value("nodescope_sessions", ["state": "connected"]) == 1)
        #expect(value("nodescope_sessions", ["state": "ended"]) == 1)
        #expect(value("nodescope_recordings", [:]) == 1)
        #expect(value("nodescope_recordings_failed_total", [:]) == 5)
        #expect(value("nodescope_otlp_sent_total", ["signal": "logs"]) == 6)
        #expect(value("nodescope_otlp_dropped_total", ["signal": "logs"]) == 1)
        #expect(value("nodescope_otlp_sent_total", ["signal": "traces"]) == 300)
        for name in Set(samples.map(\.name)) {
            #expect(help[name].map { !$0.isEmpty } == true, "\(name) has no help")
            #expect(type[name] == (name.hasSuffix("_total") ? "counter" : "gauge"), "\(name): \(type[name] ?? "no type")")
        }
    }

    @Test func aHostileProcessNameStaysInsideItsLabel() throws {
        let name = "evil\"} 1\nnodescope_recordings 99\\ \u{7F}ünï"
        let snapshot = ExportSnapshot(
            processes: [Self.process(1, name: name, pid: 1, connected: true, counts: NodeCounts(attached: 5))], daemon: .init())
        let text = PrometheusExposition.text(of: snapshot)
        let (samples, _, _) = try Self.parse(text)
        #expect(samples.filter { $0.name == "nodescope_recordings" }.map(\.value) == [0])
        let live = try #require(samples.first { $0.name == "nodescope_process_live_nodes" })
        #expect(live.labels["process"] == name)
        #expect(live.value == 5)
    }

    @Test func withNoProcessOnlyTheDaemonsFamiliesAreThere() throws {
        let (samples, _, _) = try Self.parse(PrometheusExposition.text(of: ExportSnapshot(processes: [], daemon: .init())))
        #expect(
            Set(samples.map(\.name)) == [
                "nodescope_connections", "nodescope_sessions", "nodescope_recordings", "nodescope_recordings_failed_total",
            ])
    }
    @Test func familiesComeInNameOrderAndTwoScrapesOfTheSameCountsReadTheSame() throws {
        let processes = (1...20).map {
            Self.process(UInt64($0), name: "app\($0 % 3)", pid: UInt32(100 + $0), connected: $0 % 2 == 0, counts: NodeCounts(attached: $0))
        }
        let snapshot = ExportSnapshot(processes: processes, daemon: .init(hosts: 3))
        let text = PrometheusExposition.text(of: snapshot)
        #expect(text == PrometheusExposition.text(of: snapshot))
        let names = text.split(separator: "\n").filter { $0.hasPrefix("# HELP ") }.map { $0.split(separator: " ")[2] }
        #expect(names == names.sorted(), "\(names)")
        #expect(Set(names).count == names.count)
        // Nothing lost in the sorting: every sample of the registry is there.
        let (samples, _, _) = try Self.parse(text)
        #expect(samples.filter { $0.name == "nodescope_process_live_nodes" }.count == 20)
        #expect(samples.filter { $0.name == "nodescope_process_leaks" }.count == 80)
    }
}
#endif
