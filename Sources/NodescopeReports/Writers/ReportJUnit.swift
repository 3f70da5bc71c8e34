/// `check --junit` and `leaks --format junit`: JUnit XML, which CI systems show as test results. One `<testsuite
/// name="nodescope">` with a test case per test that nodes leaked under (class name: the suite;
/// name: the test), and one per other leak group (class name: the process; name: the node's
/// path): new leaks fail, known ones pass with the baseline's reason in `<system-out>`,
/// unverified nodes are skipped (failures with --strict), late releases pass with a note. A run
/// without leaks has one passing case, "no leaks".
package enum ReportJUnit {
    /// The XML document. A check run records its command and result as properties; a report of
    /// a collector records the command line that read it, and no result.
    package static func render(_ subject: ReportSubject) -> String {
        let report = subject.report
        var cases: [String] = []
        var failures = 0
        var skipped = 0
        func add(classname: String, name: String, _ verdicts: [CaseVerdict]) {
            let failing = verdicts.filter { $0.kind == .failure }
            var body = ""
            if !failing.isEmpty {
                failures += 1
                let message = failing.map(\.message).joined(separator: " | ")
                body =
                    "      <failure type=\"\(failing[0].type)\" message=\"\(XMLText.escaped(message))\">"
                    + "\(XMLText.escaped(failing.map(\.details).joined(separator: "\n\n"), attribute: false))</failure>\n"
                let others = verdicts.filter { $0.kind != .failure }
                if !others.isEmpty {
                    body +=
                        "      <system-out>\(XMLText.escaped(others.map(\.output).joined(separator: "\n\n"), attribute: false))</system-out>\n"
                }
            } else if verdicts.allSatisfy({ $0.kind == .skipped }) {
                skipped += 1
                body =
                    "      <skipped message=\"\(XMLText.escaped(verdicts.map(\.message).joined(separator: " | ")))\"/>\n"
                    + "      <system-out>\(XMLText.escaped(verdicts.map(\.output).joined(separator: "\n\n"), attribute: false))</system-out>\n"
            } else {
                body =
                    "      <system-out>\(XMLText.escaped(verdicts.map(\.output).joined(separator: "\n\n"), attribute: false))</system-out>\n"
            }
            cases.append(
                "    <testcase classname=\"\(XMLText.escaped(classname))\" name=\"\(XMLText.escaped(name))\" time=\"0\">\n" + body
                    + "    </testcase>\n")
        }
        // Nodes attached under a test: one case per test (class name: its suite; name: the
        // test), failing with that test's own leaks.
        for (test, groups) in report.testsWithGroups {
            add(
                classname: test.suite.isEmpty ? groups[0].first.processName : test.suite, name: test.name,
                groups.map { verdict(of: $0, in: report, naming: true) })
        }
        // Tests whose nodes all went: passing cases.
        let leaking = Set(report.testsWithGroups.map(\.test))
        for test in report.tests where !leaking.contains(test) {
            cases.append(
                "    <testcase classname=\"\(XMLText.escaped(test.suite.isEmpty ? "nodescope" : test.suite))\" name=\"\(XMLText.escaped(test.name))\" time=\"0\"/>\n"
            )
        }
        // The others: one case per leak group (class name: the process; name: the node's path).
        for group in report.groups where group.test == nil {
            let uncountedGlobal = group.isUncountedGlobal(countGlobals: report.countGlobals)
            let suffix =
                switch group.verdict {
                case .leaked: uncountedGlobal ? " (retained by global)" : ""
                case .unverified: " (unverified)"
                case .lateRelease: " (late release)"
                }
            add(classname: group.first.processName, name: group.pathText + suffix, [verdict(of: group, in: report, naming: false)])
        }
        // A cut exit flush: one case per process, skipped (failing when strict), not one per node.
        for cut in report.exitFlushCuts {
            let message = "unverified: \(cut.processText): \(cut.explanation)"
            let examples = cut.paths.map { "  " + $0.joined(separator: " › ") }.joined(separator: "\n")
            let details = message + (examples.isEmpty ? "" : "\nfor example:\n" + examples)
            add(
                classname: cut.processName, name: "\(cut.causeName) (\(Vocabulary.count(cut.count, "node", "nodes")) unverified)",
                [
                    CaseVerdict(
                        kind: report.strict ? .failure : .skipped, type: "node-leak-unverified", message: message,
                        details: details, output: details)
                ])
        }
        var errors = 0
        if let failure = subject.outcome?.collectorFailure {
            errors = 1
            cases.append(
                "    <testcase classname=\"nodescope\" name=\"private collector\" time=\"0\">\n"
                    + "      <error type=\"collector-failure\" message=\"\(XMLText.escaped(failure))\"/>\n    </testcase>\n")
        } else if report.isEmpty, report.tests.isEmpty {
            cases.append("    <testcase classname=\"nodescope\" name=\"no leaks\" time=\"0\"/>\n")
        }
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\""
        var properties = ["      <property name=\"command\" value=\"\(XMLText.escaped(subject.commandLine.joined(separator: " ")))\"/>\n"]
        if let run = subject.outcome {
            properties.append("      <property name=\"commandResult\" value=\"\(XMLText.escaped(run.termination.phrase))\"/>\n")
        }
        if let grace = report.graceNanos {
            properties.append("      <property name=\"graceNanos\" value=\"\(grace)\"/>\n")
        }
        let title = subject.outcome == nil ? "nodescope leaks" : "nodescope check"
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
            + "<testsuites name=\"\(title)\" \(counts)>\n"
            + "  <testsuite name=\"nodescope\" \(counts) time=\"0\">\n"
            + "    <properties>\n"
            + properties.joined()
            + "    </properties>\n"
            + cases.joined()
            + "  </testsuite>\n"
            + "</testsuites>\n"
    }

    /// What one leak group makes of a test case.
    private struct CaseVerdict {
        enum Kind { case failure, skipped, passed }
        var kind: Kind
        var type: String
        /// The failure's or skip's message.
        var message: String
        /// The group's details.
        var details: String
        /// What a passing or skipped case says of the group in `<system-out>`.
        var output: String
    }

    private static func verdict(of group: LeakGroup, in report: LeakReport, naming: Bool) -> CaseVerdict {
        let details = details(of: group, root: report.sourceRoot, graceNanos: report.graceNanos)
        let type = group.ruleID(countGlobals: report.countGlobals)
        let node = naming ? "\(group.pathText) " : ""
        let site = group.attachSite.map { "attached at \(SourcePaths.text($0, root: report.sourceRoot)), " } ?? ""
        if group.fails(strict: report.strict, countGlobals: report.countGlobals) {
            let held = group.retainerSummary.isEmpty ? "" : "; \(group.retainerSummary)"
            let message =
                "\(group.verdict == .leaked ? "leaked" : "unverified"): \(node)\(site)alive \(group.aliveText)\(held); fingerprint \(group.fingerprint)"
            return CaseVerdict(kind: .failure, type: type, message: message, details: details, output: details)
        }
        if group.isUncountedGlobal(countGlobals: report.countGlobals) {
            return CaseVerdict(
                kind: .passed, type: type, message: "", details: details,
                output: "\(group.retainerSummary): \(Vocabulary.globalNotCounted)\n" + details)
        }
        if group.isKnown {
            return CaseVerdict(
                kind: .passed, type: type, message: "", details: details,
                output: "known leak, accepted by the baseline: \(group.baselineEntry?.reason ?? "")\n" + details)
        }
        if group.verdict == .unverified {
            return CaseVerdict(
                kind: .skipped, type: type,
                message: "unverified: \(node)the process ended within the grace; fingerprint \(group.fingerprint)",
                details: details, output: details)
        }
        return CaseVerdict(kind: .passed, type: type, message: "", details: details, output: "warning: released late\n" + details)
    }

    private static func details(of group: LeakGroup, root: String?, graceNanos: UInt64?) -> String {
        var lines = [
            "node:        \(group.path.joined(separator: " › ")) (\(group.first.kind))",
            "process:     \(group.processesText)",
        ]
        if let test = group.test { lines.append("test:        \(test.description)") }
        if let site = group.attachSite { lines.append("attached at: \(SourcePaths.text(site, root: root))") }
        lines.append("alive:       \(group.aliveText)")
        lines += group.retainerLines
        lines += [
            "flagged:     "
                + (group.verdict == .leaked
                    ? Vocabulary.flagged(delayNanos: group.delayNanos, graceNanos: graceNanos)
                    : "\(Vocabulary.duration(group.delayNanos)) after detach"),
            "fingerprint: \(group.fingerprint) (\(Vocabulary.count(group.records.count, "occurrence", "occurrences")))",
        ]
        if let released = group.first.releaseDelayNanos { lines.append("released:    \(Vocabulary.duration(released)) after detach") }
        return lines.joined(separator: "\n")
    }
}
