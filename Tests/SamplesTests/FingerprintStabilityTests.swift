import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

extension SamplesTests {
    /// Issue 31, points 4 and 5: a leak's fingerprint is a property of the leak, the same live
    /// (a held sample, `nodescope leaks --format json`), when its process settles it at exit
    /// under a plain daemon, and under `nodescope check --json`; and one node held through one
    /// cycle names one suspect, the back-reference rather than the architecture's ownership.
    @Suite("One fingerprint and one suspect per leak")
    struct FingerprintStability {
        static let leaks: [(sample: String, kind: String)] =
            ["retain-cycle", "worker", "subscription", "view"].map { ("sample-nodes", $0) }
            + ["sample-ribs", "sample-viper", "sample-bfg", "sample-modules"].map { ($0, "retain-cycle") }

        /// Debug-built hosts on a loaded machine: room for their analyses, and for the exit's
        /// settlement (a flush cut by its 1 s default settles nothing, which is not what is tested).
        static let environment = ["NODESCOPE_RETAINER_MS": "20000", "NODESCOPE_EXIT_FLUSH": "10"]

        @Test(arguments: leaks.indices)
        func aLeakHasOneFingerprintLiveAtExitAndUnderCheck(_ index: Int) throws {
            let (sample, kind) = Self.leaks[index]
            let label = "\(sample) --leak \(kind)"
            let live = try liveFingerprints(sample, kind)
            #expect(!live.isEmpty, "\(label): no leak live")
            // At exit, nodes that the leak keeps and that were attached while it held may leak
            // too (sample-modules: the parents its cycle captures): the live ones are among them.
            // Under `check` the exit is held, so every leak has its verdict: the live ones are among them.
            let checked = try checkFingerprints(sample, kind)
            #expect(
                Self.agree([live, checked]) && live.keys.allSatisfy { checked[$0] != nil },
                "\(label): live \(live), under check \(checked)")
            // Under a plain daemon the host settles them at exit when it can prove them. A
            // conservative scan can find a stale word on a thread's stack that points into the
            // cycle; then the node stays unverified (no fingerprint), never another fingerprint.
            let atExit = try exitFingerprints(sample, kind)
            #expect(Self.agree([checked, atExit]), "\(label): at exit \(atExit), under check \(checked)")
            #expect(atExit.keys.allSatisfy { checked[$0] != nil }, "\(label): at exit \(atExit), under check \(checked)")
        }

        @Test(arguments: leaks.indices)
        func aLeakHasOneFingerprintInFiveRuns(_ index: Int) throws {
            let (sample, kind) = Self.leaks[index]
            var runs: [Fingerprints] = []
            var texts: [[String]] = []
            for _ in 0..<5 {
                let (fingerprints, hashed) = try exitRun(sample, kind)
                runs.append(fingerprints)
                texts.append(hashed)
            }
            // A node whose leak an exit could not prove (see above) has no fingerprint in that
            // run; in every run that proves it, it has the same one. When they differ, the texts
            // that were hashed say why (which suspect, which roles alive).
            #expect(runs.contains { !$0.isEmpty }, "\(sample) --leak \(kind): no run proved a leak")
            #expect(Self.agree(runs), "\(sample) --leak \(kind): \(runs); hashed, run by run: \(texts)")
        }

        @Test func everyObjectOfTheViperCycleNamesTheBackReference() throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try harness.startHeld("sample-viper", ["--leak", "retain-cycle"])
            defer { host.stop() }
            harness.waitPastGrace()
            let leaks = try harness.leaks(of: host) { everyLeakExplained($0) }
            let leak = try #require(leaks.first { $0.path.last == "ProfileEditModule" })
            #expect(leak.retainers.count == leak.aliveObjects.count)
            for path in leak.retainers {
                let suspect = path.suspectIndex.map { path.hops[$0] }
                #expect(suspect?.holder == "ProfileEditPresenter", "object \(path.objectIndex): \(path.hops)")
                #expect(suspect?.reference == ".strongView", "object \(path.objectIndex): \(path.hops)")
            }
        }

        /// Issue 31, point 6: the first login's Settings worker is held through the shared ticker
        /// from the second login's worker, of the same type: the report names the holder's node
        /// by its path and occurrence.
        @Test func aHolderOfTheSameTypeIsNamedByItsNodesPathAndOccurrence() throws {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try ChildProcess(
                "sample-nodes", ["--hold", "30", "--leak", "worker"],
                environment: Self.environment.merging(["NODESCOPE_SOCKET": harness.socket]) { $1 })
            defer { host.stop() }
            #expect(host.waitForLine(prefix: "holding", seconds: 30) != nil)
            harness.waitPastGrace()
            _ = try harness.leaks(of: host) { everyLeakExplained($0) }
            let text = try harness.run(["leaks", "\(host.process.processIdentifier)"]).output
            #expect(
                text.contains("held by  SettingsSyncWorker (attached node AppFlow › LoggedInFlow › SettingsFlow)"),
                "\(text)")
            #expect(text.contains("(detached node AppFlow › LoggedInFlow#1 › SettingsFlow)"), "\(text)")
        }

        /// The fingerprints of the leaks of one run, by the path of the leaked node (nodes of
        /// one path can leak more than once).
        typealias Fingerprints = [String: Set<String>]

        static func fingerprints(_ leaks: some Sequence<(path: [String], fingerprint: String)>) -> Fingerprints {
            leaks.reduce(into: [:]) { $0[$1.path.joined(separator: " › "), default: []].insert($1.fingerprint) }
        }

        /// Whether every node has one fingerprint in each run and the same in every run that has it.
        static func agree(_ runs: [Fingerprints]) -> Bool {
            var seen: Fingerprints = [:]
            for run in runs {
                for (path, fingerprints) in run {
                    if let earlier = seen[path], earlier != fingerprints { return false }
                    seen[path] = fingerprints
                }
            }
            return seen.values.allSatisfy { $0.count == 1 }
        }

        /// The fingerprints of a held sample's leaks once explained.
        func liveFingerprints(_ sample: String, _ kind: String) throws -> Fingerprints {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try ChildProcess(
                sample, ["--hold", "30", "--leak", kind],
                environment: Self.environment.merging(["NODESCOPE_SOCKET": harness.socket]) { $1 })
            defer { host.stop() }
            #expect(host.waitForLine(prefix: "holding", seconds: 30) != nil)
            harness.waitPastGrace()
            let leaks = try harness.leaks(of: host) { everyLeakExplained($0) }
            return Self.fingerprints(leaks.filter { $0.verdict == .leaked }.map { ($0.path, $0.fingerprint) })
        }

        /// The fingerprints of a sample's leaks when it runs to its end under a plain daemon.
        func exitFingerprints(_ sample: String, _ kind: String) throws -> Fingerprints {
            try exitRun(sample, kind).fingerprints
        }

        /// The same, with the text each fingerprint hashes (``LeakFingerprint``) and each path's
        /// verdicts, to say why two runs disagree.
        func exitRun(_ sample: String, _ kind: String) throws -> (fingerprints: Fingerprints, hashed: [String]) {
            let harness = try SampleHarness()
            defer { harness.stop() }
            let host = try ChildProcess(
                sample, ["--leak", kind, "--quiet"],
                environment: Self.environment.merging(["NODESCOPE_SOCKET": harness.socket]) { $1 })
            #expect(host.waitForExit(seconds: 60) == 0)
            let deadline = Date().addingTimeInterval(10)
            while true {
                let output = try harness.run(["leaks", "\(host.process.processIdentifier)", "--format", "json"]).output
                let report = try? JSONDecoder().decode(LeaksJSON.self, from: Data(output.utf8))
                if let report, report.processes.first?.counts.awaitingRelease == 0 || Date() > deadline {
                    let leaked = report.leaks.filter { $0.verdict == .leaked }
                    let hashed = leaked.map { leak in
                        LeakFingerprint.canonicalText(path: leak.path, aliveObjects: leak.aliveObjects, retainers: leak.retainers)
                            + " (paths: " + leak.retainers.map { "\($0.verdict)" }.joined(separator: ", ") + ")"
                    }
                    return (Self.fingerprints(leaked.map { ($0.path, $0.fingerprint) }), hashed)
                }
                if Date() > deadline { return ([:], []) }
                Thread.sleep(forTimeInterval: 0.05)
            }
        }

        /// The fingerprints of `nodescope check --json` on a sample's leaks.
        func checkFingerprints(_ sample: String, _ kind: String) throws -> Fingerprints {
            let json = makeScratchDirectory().appendingPathComponent("check.json")
            let sampleBinary = ChildProcess.binDirectory.appendingPathComponent(sample).path
            let check = try ChildProcess(
                "nodescope", ["check", "--json", json.path, "--", sampleBinary, "--leak", kind, "--quiet"],
                environment: Self.environment)
            #expect(check.waitForExit(seconds: 120) == 1, "check \(sample): \(check.stderr)")
            let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
            let leaks = report["leaks"] as? [[String: Any]] ?? []
            return Self.fingerprints(
                leaks.filter { $0["verdict"] as? String == "leaked" }.compactMap { leak in
                    guard let path = leak["path"] as? [String], let fingerprint = leak["fingerprint"] as? String else {
                        return nil
                    }
                    return (path, fingerprint)
                })
        }
    }
}
