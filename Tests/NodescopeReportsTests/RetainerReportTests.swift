import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

@testable import NodescopeReports

#if canImport(FoundationXML)
import FoundationXML
#endif

/// Leak reports with the hosts' retainer paths: every format, and the gate on leaks held only by
/// globals. The expected texts are the reports as a reader sees them.
@Suite(.offTheCooperativePool) struct RetainerReportTests {
    static let listenerPath = RetainerPath(
        objectIndex: 1, verdict: .holder,
        hops: [
            .init(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".component"),
            .init(holderKind: .object, holder: "AppComponent", reference: ".shared[\"session\"]"),
            .init(holderKind: .object, holder: "Session", reference: ".listeners[3]", isSuspect: true),
            .init(holderKind: .closureContext, holder: "closure context", reference: "capture"),
        ], elapsedMicros: 1_200)

    static let cyclePath = RetainerPath(
        objectIndex: 2, verdict: .cycle,
        hops: [
            .init(holderKind: .detachedNodeObject, holderNodeID: 5, holder: "SyncWorker", reference: ".timer"),
            .init(holderKind: .object, holder: "Timer", reference: ".handler", isSuspect: true),
            .init(holderKind: .closureContext, holder: "closure context", reference: "capture"),
        ])

    static func globalPath(_ index: UInt16, _ name: String = "main.app") -> RetainerPath {
        RetainerPath(objectIndex: index, verdict: .global, hops: [.init(holderKind: .global, holder: name, reference: "")])
    }

    static func record(
        _ path: [String], objects: [(String, String)], retainers: [RetainerPath], nodeID: UInt64 = 5,
        pid: UInt32 = 1617, verdict: LeakRecord.Verdict = .leaked
    ) -> LeakRecord {
        let alive = objects.enumerated().map {
            ObjectInfo(index: UInt16($0.offset + 1), role: $0.element.0, typeName: $0.element.1, isAlive: true)
        }
        return LeakRecord(
            session: SessionID(rawValue: 1), pid: pid, processName: "sample-nodes", nodeID: nodeID, kind: "Flow", path: path,
            aliveObjects: alive, detachedAtNanos: 1_000_000_000, flaggedAtNanos: 2_000_000_000,
            releasedAtNanos: verdict == .lateRelease ? 3_000_000_000 : nil, verdict: verdict,
            fingerprint: LeakFingerprint.fingerprint(path: path, aliveObjects: alive, retainers: retainers), retainers: retainers)
    }

    static let profileLeak = record(
        ["AppFlow", "LoggedInFlow", "ProfileFlow"], objects: [("context", "ProfileContextImp")], retainers: [listenerPath])
    static let workerLeak = record(
        ["AppFlow", "FeedFlow"], objects: [("context", "FeedContextImp"), ("worker", "SyncWorker")],
        retainers: [
            RetainerPath(objectIndex: 1, verdict: .unknown),
            cyclePath,
        ], nodeID: 6)
    static let globalLeak = record(
        ["AppFlow"], objects: [("flow", "AppFlowImp"), ("context", "AppContextImp")], retainers: [globalPath(1), globalPath(2)],
        nodeID: 1)

    static func outcome(_ leaks: [LeakRecord], countGlobals: Bool = false) -> CheckOutcome {
        let process = ProcessSummary(
            session: SessionID(rawValue: 1), pid: 1617, processName: "sample-nodes", connectedAtNanos: 0,
            endedAtNanos: 3_000_000_000, endedNormally: true, liveNodes: 0, leaks: leaks.count, eventsIngested: 10,
            droppedReported: 0)
        return CheckOutcome(
            command: ["swift", "test"], termination: .exited(0), leaks: leaks, processes: [process], baseline: nil,
            baselineFile: nil, baselineOutput: nil, strict: false, countGlobals: countGlobals, graceNanos: 1_000_000_000)
    }

    // MARK: Text

    @Test func theTextReportShowsEachPathHopByHop() {
        let text = ReportText.render(.check(Self.outcome([Self.profileLeak, Self.workerLeak, Self.globalLeak])), colorful: false)
        let expected = """
            LEAK  AppFlow › LoggedInFlow › ProfileFlow  (Flow)
              process:     sample-nodes [pid 1617]
              alive:       context ProfileContextImp
                held by  AppFlowImp (attached node)
                         ─ .component ─▶ AppComponent
                         ─ .shared["session"] ─▶ Session
                         ─ .listeners[3] ─▶ closure context   ◀ suspect: the reference to cut
                         ─ capture ─▶ ProfileContextImp
              flagged:     1.0 s after detach
              fingerprint: \(Self.profileLeak.fingerprint)  (1 occurrence)

            LEAK  AppFlow › FeedFlow  (Flow)
              process:     sample-nodes [pid 1617]
              alive:       context FeedContextImp, worker SyncWorker
                context FeedContextImp
                  holder unknown: the analysis found no reference to it (a register, an encoded pointer or an unbalanced retain may hold it)
                worker SyncWorker
                  retain cycle: SyncWorker ─ .timer ─▶ Timer ─ .handler ─▶ closure context ─ capture ─▶ SyncWorker
                                ◀ suspect: Timer.handler, the reference to cut
              flagged:     1.0 s after detach
              fingerprint: \(Self.workerLeak.fingerprint)  (1 occurrence)

            RETAINED BY GLOBAL  AppFlow  (Flow)
              process:     sample-nodes [pid 1617]
              alive:       flow AppFlowImp, context AppContextImp
                flow AppFlowImp
                  retained by global `main.app`
                context AppContextImp
                  retained by global `main.app`
              not a leak:  not counted as a leak by check: only a global holds it (--count-globals counts it)
              flagged:     1.0 s after detach
              fingerprint: \(Self.globalLeak.fingerprint)  (1 occurrence)

            2 leaked, 0 unverified, 0 released late, 1 retained by a global
            nodescope check: 2 new leaks (1 retained by a global) — failing

            """
        #expect(text == expected, "\(text)")
    }

    @Test func cutShortNotAnalyzedAndHostileNamesSaySoSafely() {
        let hostile = RetainerPath(
            objectIndex: 1, verdict: .holder,
            hops: [
                .init(holderKind: .global, holder: "main.\u{1B}]0;pwned\u{07}", reference: ""),
                .init(holderKind: .unknownMemory, holder: "a 48-byte heap block", reference: "+24\n FAKE ROW", isSuspect: true),
            ], cutShort: true, note: "cut short after 50 ms\u{1B}[2J")
        let lines = RetainerText.lines(hostile, objectType: "Ctx\u{9B}")
        #expect(
            lines == [
                "held by  main.\\e]0;pwned\\x07 (global)",
                "         ─▶ a 48-byte heap block (unknown memory)",
                "         ─ +24\\n FAKE ROW ─▶ Ctx\\u{9b}   ◀ suspect: the reference to cut",
                "cut short: cut short after 50 ms\\e[2J",
            ])
        #expect(
            RetainerText.lines(RetainerPath(objectIndex: 0, verdict: .notAnalyzed, note: "no symbols"), objectType: "T")
                == ["not analyzed: no symbols"])
        #expect(
            RetainerText.lines(RetainerPath(objectIndex: 0, verdict: .stack), objectType: "T") == ["held by a thread's stack"])
        // A path through a task's memory is code in flight too, and says which.
        let throughTask = RetainerPath(
            objectIndex: 0, verdict: .stack,
            hops: [
                .init(holderKind: .stack, holder: "thread stack", reference: "local"),
                .init(holderKind: .unknownMemory, holder: "async task", reference: "+208"),
                .init(holderKind: .unknownMemory, holder: "async frames", reference: "+232"),
                .init(holderKind: .object, holder: "FrameBox", reference: ".local"),
            ])
        #expect(RetainerText.summary(throughTask) == "held by an async task")
        #expect(RetainerText.lines(throughTask, objectType: "T").first == "held by  thread stack")
        let onAThread = RetainerPath(
            objectIndex: 0, verdict: .stack, hops: [.init(holderKind: .stack, holder: "thread stack", reference: "local")])
        #expect(RetainerText.summary(onAThread) == "held by a thread's stack")
        #expect(
            RetainerText.lines(RetainerPath(objectIndex: 0, verdict: .holder, cutShort: true), objectType: "T")
                == ["held by: no path found", "cut short: " + Vocabulary.cutShort])
        #expect(RetainerText.summary(hostile) == "held by a 48-byte heap block (+24\\n FAKE ROW) (cut short)")
        #expect(RetainerText.summary(Self.listenerPath) == "held by Session.listeners[3]")
        #expect(RetainerText.summary(Self.cyclePath) == "retain cycle through Timer.handler")
        #expect(RetainerText.summary(Self.globalPath(0)) == "retained by global `main.app`")
        #expect(
            RetainerText.line(Self.listenerPath, objectType: "ProfileContextImp")
                == "held by AppFlowImp (attached node) ─ .component ─▶ AppComponent ─ .shared[\"session\"] ─▶ Session "
                + "─ .listeners[3] ─▶ closure context ─ capture ─▶ ProfileContextImp; suspect: Session.listeners[3]")
    }

    @Test func theCollectorReportCountsGlobalsApart() {
        let report = LeakReport(leaks: [Self.profileLeak, Self.globalLeak], processes: [])
        let text = ReportText.render(.collector(report, commandLine: ["nodescope", "leaks"]), colorful: false)
        #expect(text.hasSuffix("1 leaked, 0 unverified, 0 released late, 1 retained by a global\n"))
        let counted = LeakReport(leaks: [Self.profileLeak, Self.globalLeak], processes: [], countGlobals: true)
        #expect(counted.countsLine == "2 leaked, 0 unverified, 0 released late")
    }

    // MARK: The gate

    @Test func aLeakHeldOnlyByAGlobalDoesNotFailUnlessGlobalsCount() {
        let quiet = Self.outcome([Self.globalLeak])
        #expect(quiet.exitCode == 0)
        #expect(quiet.failingGroups.isEmpty)
        #expect(quiet.verdictLine == "nodescope check: no new leaks (1 retained by a global) — passing")
        #expect(quiet.baselineDocument.contains("\"entries\": []") || !quiet.baselineDocument.contains(Self.globalLeak.fingerprint))

        let counted = Self.outcome([Self.globalLeak], countGlobals: true)
        #expect(counted.exitCode == 1)
        #expect(counted.verdictLine == "nodescope check: 1 new leak — failing")
        let text = ReportText.render(.check(counted), colorful: false)
        #expect(text.hasPrefix("LEAK  AppFlow  (Flow)"))
        #expect(text.contains("retained by global `main.app`"))
        #expect(!text.contains("not a leak:"))
        #expect(counted.baselineDocument.contains(Self.globalLeak.fingerprint))

        // Not every object held by a global: a leak like any other.
        let mixed = Self.record(
            ["AppFlow"], objects: [("flow", "AppFlowImp"), ("context", "AppContextImp")],
            retainers: [Self.globalPath(1), Self.listenerPath.with(objectIndex: 2)])
        #expect(Self.outcome([mixed]).exitCode == 1)
        // A known leak stays known, held by a global or not.
        let known = try? Baseline.parse(
            Array("{\"version\": 1, \"entries\": [{\"path\": \"AppFlow\", \"reason\": \"the app\"}]}".utf8))
        let baselined = CheckOutcome(
            command: ["t"], termination: .exited(0), leaks: [Self.globalLeak], processes: [], baseline: known,
            baselineFile: "b.json", baselineOutput: nil, strict: false, graceNanos: 1)
        #expect(baselined.verdictLine == "nodescope check: no new leaks (1 known) — passing")
    }

    // MARK: JSON

    @Test func theJSONReportCarriesThePathsAsData() throws {
        let json = ReportJSON.render(Self.outcome([Self.profileLeak, Self.globalLeak]))
        let expectedRetainers = """
                  "retainers": [
                    {
                      "objectIndex": 1,
                      "role": "context",
                      "typeName": "ProfileContextImp",
                      "verdict": "holder",
                      "cutShort": false,
                      "note": "",
                      "elapsedMicros": 1200,
                      "suspectHop": 2,
                      "hops": [
                        {
                          "holderKind": "attachedNodeObject",
                          "holderNodeID": 1,
                          "holder": "AppFlowImp",
                          "reference": ".component",
                          "isSuspect": false,
                          "closure": null
                        },
                        {
                          "holderKind": "object",
                          "holderNodeID": null,
                          "holder": "AppComponent",
                          "reference": ".shared[\\"session\\"]",
                          "isSuspect": false,
                          "closure": null
                        },
                        {
                          "holderKind": "object",
                          "holderNodeID": null,
                          "holder": "Session",
                          "reference": ".listeners[3]",
                          "isSuspect": true,
                          "closure": null
                        },
                        {
                          "holderKind": "closureContext",
                          "holderNodeID": null,
                          "holder": "closure context",
                          "reference": "capture",
                          "isSuspect": false,
                          "closure": null
                        }
                      ],
                      "suspectClosure": null,
                      "text": "held by AppFlowImp (attached node) ─ .component ─▶ AppComponent ─ .shared[\\"session\\"] ─▶ Session ─ .listeners[3] ─▶ closure context ─ capture ─▶ ProfileContextImp; suspect: Session.listeners[3]"
                    }
                  ],
                  "retainedByGlobal": false,
            """
        #expect(json.contains(expectedRetainers), "\(json)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["schemaVersion"] as? Int == 5)
        #expect(object["countGlobals"] as? Bool == false)
        let summary = try #require(object["summary"] as? [String: Any])
        #expect(summary["newLeaks"] as? Int == 1)
        #expect(summary["retainedByGlobals"] as? Int == 1)
        #expect(summary["failing"] as? Int == 1)
        let leaks = try #require(object["leaks"] as? [[String: Any]])
        #expect(leaks.map { $0["retainedByGlobal"] as? Bool } == [false, true])
        #expect(leaks.map { $0["fails"] as? Bool } == [true, false])
        try Self.validate(json, against: Self.repositoryRoot.appendingPathComponent("docs/check-report.schema.json"))
    }

    // MARK: JUnit

    @Test func theJUnitReportNamesTheHolderInItsMessage() throws {
        let xml = ReportJUnit.render(.check(Self.outcome([Self.profileLeak, Self.globalLeak])))
        let parser = XMLParser(data: Data(xml.utf8))
        let elements = JUnitElements()
        parser.delegate = elements
        #expect(parser.parse(), "\(xml)")
        #expect(
            elements.failures == [
                "leaked: alive context ProfileContextImp; held by Session.listeners[3]; fingerprint \(Self.profileLeak.fingerprint)"
            ])
        #expect(elements.testcases == ["sample-nodes AppFlow/LoggedInFlow/ProfileFlow", "sample-nodes AppFlow (retained by global)"])
        #expect(xml.contains("tests=\"2\" failures=\"1\""))
        #expect(xml.contains("         ─ .listeners[3] ─▶ closure context   ◀ suspect: the reference to cut\n"))
        #expect(
            xml.contains(
                "<system-out>retained by global `main.app`: not counted as a leak by check: only a global holds it (--count-globals counts it)\n"
            ))
    }

    // MARK: SARIF

    @Test func theSARIFReportRelatesEachHop() throws {
        let sarif = ReportSARIF.render(.check(Self.outcome([Self.profileLeak, Self.globalLeak])))
        let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.utf8)) as? [String: Any])
        let run = try #require((log["runs"] as? [[String: Any]])?.first)
        let rules = try #require(((run["tool"] as? [String: Any])?["driver"] as? [String: Any])?["rules"] as? [[String: Any]])
        #expect(rules.map { $0["id"] as? String } == ["node-leak", "node-leak-unverified", "node-late-release", "node-retained-by-global"])
        let results = try #require(run["results"] as? [[String: Any]])
        #expect(results.map { $0["ruleId"] as? String } == ["node-leak", "node-retained-by-global"])
        #expect(results.map { $0["level"] as? String } == ["error", "note"])
        #expect(results.map { $0["ruleIndex"] as? Int } == [0, 3])
        let message = try #require((results[0]["message"] as? [String: Any])?["text"] as? String)
        #expect(
            message.contains(
                "Why context ProfileContextImp is alive: held by AppFlowImp (attached node) ─ .component ─▶ AppComponent"))
        let related = try #require(results[0]["relatedLocations"] as? [[String: Any]])
        #expect(related.count == 4)
        #expect(related.map { $0["id"] as? Int } == [1, 2, 3, 4])
        let logical = related.compactMap { ($0["logicalLocations"] as? [[String: Any]])?.first }
        #expect(
            logical.map { $0["fullyQualifiedName"] as? String } == [
                "AppFlowImp.component", "AppComponent.shared[\"session\"]", "Session.listeners[3]", "closure context (capture)",
            ])
        #expect(logical.map { $0["kind"] as? String } == ["member", "element", "element", "object"])
        #expect(logical.map { $0["name"] as? String } == ["component", "shared[\"session\"]", "listeners[3]", "closure context"])
        let third = try #require((related[2]["message"] as? [String: Any])?["text"] as? String)
        #expect(
            third == "context ProfileContextImp, retainer path hop 3 of 4: Session.listeners[3] ─▶ closure context "
                + "(suspect: the reference to cut)")
        let global = try #require((results[1]["relatedLocations"] as? [[String: Any]])?.first)
        #expect((global["logicalLocations"] as? [[String: Any]])?.first?["kind"] as? String == "variable")
        #expect((results[1]["properties"] as? [String: Any])?["retainedByGlobal"] as? Bool == true)
        try Self.validate(sarif, against: Self.sarifSchema)
    }

    @Test func aSARIFHopIntoACollectionIsAnElementAndAFieldAMember() {
        func kind(_ kind: RetainerPath.HolderKind, _ holder: String, _ reference: String) -> [String] {
            let location = ReportSARIF.logicalLocation(of: .init(holderKind: kind, holder: holder, reference: reference))
            return [location.name, location.qualified, location.kind]
        }
        #expect(kind(.object, "Session", ".listeners[3]") == ["listeners[3]", "Session.listeners[3]", "element"])
        #expect(kind(.object, "Store", ".items[\"a\"]") == ["items[\"a\"]", "Store.items[\"a\"]", "element"])
        #expect(kind(.collection, "Array<AnyObject>", "[2]") == ["[2]", "Array<AnyObject>[2]", "element"])
        #expect(kind(.object, "Session", ".session") == ["session", "Session.session", "member"])
        #expect(kind(.closureContext, "closure context", "capture") == ["closure context", "closure context (capture)", "object"])
        #expect(kind(.global, "main.app", "") == ["main.app", "main.app", "variable"])
    }

    // MARK: Diagrams

    @Test func diagramsNoteWhatHoldsANodeAndTellAllInATooltip() throws {
        var ghost = NodeInfo(
            id: 5, parent: 1, kind: "ProfileFlow", name: "", status: .leaked,
            objects: [
                ObjectInfo(index: 0, role: "flow", typeName: "ProfileFlowImp", isAlive: false),
                ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true),
            ],
            attachedAtNanos: 0, detachedAtNanos: 1_000_000_000, depth: 1, retainers: [Self.listenerPath])
        let root = NodeInfo(
            id: 1, parent: nil, kind: "AppFlow", name: "", status: .active, objects: [], attachedAtNanos: 0, detachedAtNanos: nil,
            depth: 0)
        let view = TreeView(session: SessionID(rawValue: 1), pid: 1, processName: "p", nodes: [root, ghost])
        let diagram = DiagramMapping.diagram(for: view, leaks: [Self.profileLeak], fullRetainerPaths: [])
        let box = try #require(diagram.nodes.last)
        #expect(box.note == "leaked: alive 1.0 s after detach\ncontext: held by Session.listeners[3]")
        #expect(
            box.tooltip == "context ProfileContextImp: " + RetainerText.line(Self.listenerPath, objectType: "ProfileContextImp"))
        #expect(diagram.nodes.first?.tooltip == nil)

        let full = DiagramMapping.diagram(for: view, leaks: [Self.profileLeak], fullRetainerPaths: [5])
        #expect(
            full.nodes.last?.note == """
                leaked: alive 1.0 s after detach
                context: held by AppFlowImp (attached node)
                ─ .component ─▶ AppComponent
                ─ .shared["session"] ─▶ Session
                ─ .listeners[3] ─▶ closure context ◀ suspect: the reference to cut
                ─ capture ─▶ ProfileContextImp
                """)

        // Without the node's own paths, its record's.
        ghost.retainers = nil
        let fromRecord = DiagramMapping.diagram(
            for: TreeView(session: SessionID(rawValue: 1), pid: 1, processName: "p", nodes: [root, ghost]), leaks: [Self.profileLeak])
        #expect(fromRecord.nodes.last?.note == box.note)

        let svg = try TreeDiagram.draw(view, leaks: [Self.profileLeak], format: .svg).text
        #expect(svg.contains("context: held by Session.listeners[3]"))
        #expect(svg.contains("xlink:title=\"context ProfileContextImp: held by AppFlowImp (attached node)"), "\(svg)")
        let dot = try TreeDiagram.draw(view, leaks: [Self.profileLeak], format: .dot).text
        #expect(dot.contains("tooltip=\"context ProfileContextImp: held by AppFlowImp"))
    }

    // MARK: Support

    static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    /// The OASIS SARIF 2.1.0 schema, vendored (Tests/Support/Schemas).
    static let sarifSchema = repositoryRoot.appendingPathComponent("Tests/Support/Schemas/sarif-schema-2.1.0.json")

    /// Validates JSON against a JSON Schema with python3's jsonschema, when both are installed.
    static func validate(_ json: String, against schema: URL) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("nodescope-report-\(UUID().uuidString).json")
        try json.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let script = """
            import json, sys
            try:
                import jsonschema
            except ImportError:
                sys.exit(3)
            schema = json.load(open(sys.argv[1]))
            document = json.load(open(sys.argv[2]))
            errors = list(jsonschema.validators.validator_for(schema)(schema).iter_errors(document))
            for error in errors[:5]:
                print("/".join(str(p) for p in error.absolute_path) + ": " + error.message)
            sys.exit(1 if errors else 0)
            """
        let run: ChildProcess
        do {
            run = try ChildProcess("/usr/bin/env", ["python3", "-c", script, schema.path, file.path], absolutePath: true)
        } catch { return }
        let status = run.waitForExit(seconds: 120)
        let text = run.stdout + run.stderr
        // 3: no jsonschema module; 127: no python3. Either way there is nothing to validate with.
        guard status != 3, status != 127 else { return }
        #expect(status == 0, "\(schema.lastPathComponent): \(text)")
    }
}

extension RetainerPath {
    fileprivate func with(objectIndex: UInt16) -> RetainerPath {
        var copy = self
        copy.objectIndex = objectIndex
        return copy
    }
}

/// What a JUnit report holds: failure messages and test cases.
private final class JUnitElements: NSObject, XMLParserDelegate {
    var failures: [String] = []
    var testcases: [String] = []

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if elementName == "failure" { failures.append(attributes["message"] ?? "") }
        if elementName == "testcase" { testcases.append("\(attributes["classname"] ?? "") \(attributes["name"] ?? "")") }
    }
}
