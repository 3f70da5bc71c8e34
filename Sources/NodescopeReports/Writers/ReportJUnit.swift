/// `check --junit` and `leaks --format junit`: JUnit XML, which CI systems show as test results. One `<testsuite
/// name="nodescope">` with a test case per leak group (class name: the process; name: the
/// node's path): new leaks fail, known ones pass with the baseline's reason in `<system-out>`,
/// unverified nodes are skipped (failures with --strict), late releases pass with a note. A run
/// without leaks has one passing case, "no leaks".
public enum ReportJUnit {
    /// The XML document. A check run records its command and result as properties; a report of
    /// a collector records the command line that read it, and no result.
    public static func render(_ subject: ReportSubject) -> String {
        let report = subject.report
        var cases: [String] = []
        var failures = 0
        var skipped = 0
        for group in report.groups {
            let uncountedGlobal = group.isUncountedGlobal(countGlobals: report.countGlobals)
            let suffix =
                switch group.verdict {
                case .leaked: uncountedGlobal ? " (retained by global)" : ""
                case .unverified: " (unverified)"
                case .lateRelease: " (late release)"
                }
            let name = group.pathText + suffix
            var body = ""
            let details = details(of: group)
            if group.fails(strict: report.strict, countGlobals: report.countGlobals) {
                failures += 1
                let held = group.retainerSummary.isEmpty ? "" : "; \(group.retainerSummary)"
                let message =
                    "\(group.verdict == .leaked ? "leaked" : "unverified"): alive \(group.aliveText)\(held); fingerprint \(group.fingerprint)"
                body =
                    "      <failure type=\"\(group.ruleID(countGlobals: report.countGlobals))\" message=\"\(escape(message))\">\(escape(details, attribute: false))</failure>\n"
            } else if uncountedGlobal {
                body =
                    "      <system-out>\(escape("\(group.retainerSummary): \(Vocabulary.globalNotCounted)\n" + details, attribute: false))</system-out>\n"
            } else if group.isKnown {
                body =
                    "      <system-out>\(escape("known leak, accepted by the baseline: \(group.baselineEntry?.reason ?? "")\n" + details, attribute: false))</system-out>\n"
            } else if group.verdict == .unverified {
                skipped += 1
                body =
                    "      <skipped message=\"\(escape("unverified: the process ended within the grace; fingerprint \(group.fingerprint)"))\"/>\n"
                    + "      <system-out>\(escape(details, attribute: false))</system-out>\n"
            } else {
                body = "      <system-out>\(escape("warning: released late\n" + details, attribute: false))</system-out>\n"
            }
            cases.append(
                "    <testcase classname=\"\(escape(group.first.processName))\" name=\"\(escape(name))\" time=\"0\">\n" + body
                    + "    </testcase>\n")
        }
        var errors = 0
        if let failure = subject.outcome?.collectorFailure {
            errors = 1
            cases.append(
                "    <testcase classname=\"nodescope\" name=\"private collector\" time=\"0\">\n"
                    + "      <error type=\"collector-failure\" message=\"\(escape(failure))\"/>\n    </testcase>\n")
        } else if report.groups.isEmpty {
            cases.append("    <testcase classname=\"nodescope\" name=\"no leaks\" time=\"0\"/>\n")
        }
        let counts = "tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"\(errors)\" skipped=\"\(skipped)\""
        var properties = ["      <property name=\"command\" value=\"\(escape(subject.commandLine.joined(separator: " ")))\"/>\n"]
        if let run = subject.outcome {
            properties.append("      <property name=\"commandResult\" value=\"\(escape(run.termination.phrase))\"/>\n")
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

    private static func details(of group: LeakGroup) -> String {
        var lines = [
            "node:        \(group.path.joined(separator: " › ")) (\(group.first.kind))",
            "process:     \(group.processesText)",
            "alive:       \(group.aliveText)",
        ]
        lines += group.retainerLines
        lines += [
            "flagged:     \(Vocabulary.duration(group.delayNanos)) after detach",
            "fingerprint: \(group.fingerprint) (\(Vocabulary.count(group.records.count, "occurrence", "occurrences")))",
        ]
        if let released = group.first.releaseDelayNanos { lines.append("released:    \(Vocabulary.duration(released)) after detach") }
        return lines.joined(separator: "\n")
    }

    /// Escapes text for XML content and attribute values, and replaces the characters XML 1.0
    /// cannot hold (most control characters) with U+FFFD.
    public static func escape(_ text: String, attribute: Bool = true) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\n", "\t", "\r": result += attribute ? "&#\(scalar.value);" : String(scalar)
            case "\u{00}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
