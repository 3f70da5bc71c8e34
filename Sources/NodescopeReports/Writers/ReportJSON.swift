import NodescopeCollector

/// `check --json`: the whole outcome for tools, schema version 4 (docs/CHECK.md,
/// docs/check-report.schema.json). Keys come in the documented order; absent values are null.
package enum ReportJSON {
    /// The schema version written in `schemaVersion`.
    static let schemaVersion: Int64 = 5

    package static func render(_ outcome: CheckOutcome) -> String {
        value(outcome).rendered()
    }

    static func value(_ outcome: CheckOutcome) -> ReportJSONValue {
        let signal: Int32? = if case .signaled(let number) = outcome.termination { number } else { nil }
        let status: Int32? = if case .exited(let number) = outcome.termination { number } else { nil }
        let summary: [(String, ReportJSONValue)] = [
            ("processes", .int(Int64(outcome.processes.count))),
            (
                "newLeaks",
                .int(
                    Int64(
                        outcome.groups.filter {
                            $0.verdict == .leaked && !$0.isKnown && !$0.isUncountedGlobal(countGlobals: outcome.countGlobals)
                        }.count))
            ),
            ("knownLeaks", .int(Int64(outcome.groups.filter(\.isKnown).count))),
            ("unverified", .int(Int64(outcome.groups.filter { $0.verdict == .unverified && !$0.isKnown }.count))),
            ("lateReleases", .int(Int64(outcome.groups.filter { $0.verdict == .lateRelease && !$0.isKnown }.count))),
            ("retainedByGlobals", .int(Int64(outcome.report.uncountedGlobalGroups.count))),
            ("failing", .int(Int64(outcome.failingGroups.count))),
            ("staleBaselineEntries", .int(Int64(outcome.staleEntries.count))),
        ]
        return .object([
            ("schemaVersion", .int(schemaVersion)),
            ("tool", .string("nodescope check")),
            ("command", .array(outcome.command.map { .string($0) })),
            (
                "commandResult",
                .object([
                    ("exitStatus", status.map { .int(Int64($0)) } ?? .null),
                    ("signal", signal.map { .int(Int64($0)) } ?? .null),
                    ("signalName", .string(signal.map(CheckTermination.name(of:)))),
                ])
            ),
            ("graceNanos", .uint(outcome.graceNanos)),
            ("strict", .bool(outcome.strict)),
            ("countGlobals", .bool(outcome.countGlobals)),
            ("baseline", .string(outcome.baselineFile)),
            ("processes", .array(outcome.processes.map { process($0, cuts: outcome.report.exitFlushCuts) })),
            ("counts", counts(outcome.report.counts)),
            (
                "leaks",
                .array(
                    outcome.groups.map {
                        leak($0, strict: outcome.strict, countGlobals: outcome.countGlobals, root: outcome.report.sourceRoot)
                    })
            ),
            ("tests", .array(tests(of: outcome.report).map { test($0.test, groups: $0.groups, outcome: outcome) })),
            ("sourceRoot", .string(outcome.report.sourceRoot)),
            ("staleBaselineEntries", .array(outcome.staleEntries.map(entry))),
            ("summary", .object(summary)),
            ("result", .string(outcome.failure == nil ? "pass" : "fail")),
            ("failure", .string(outcome.failure?.rawValue)),
            ("collectorFailure", .string(outcome.collectorFailure)),
            ("exitCode", .int(Int64(outcome.exitCode))),
        ])
    }

    /// Node counts (``NodeCounts``), the numbers `ps` and `leaks` show.
    static func counts(_ counts: NodeCounts) -> ReportJSONValue {
        .object([
            ("attached", .int(Int64(counts.attached))),
            ("awaitingRelease", .int(Int64(counts.awaitingRelease))),
            ("leaked", .int(Int64(counts.leaked))),
            ("retainedByGlobal", .int(Int64(counts.retainedByGlobal))),
            ("unverified", .int(Int64(counts.unverified))),
            ("exitFlushCut", .int(Int64(counts.exitFlushCut))),
            ("releasedLate", .int(Int64(counts.releasedLate))),
        ])
    }

    /// A cut exit flush: how many nodes it left unverified, the first paths, and what to do.
    static func exitFlushCut(_ cut: ExitFlushCut?) -> ReportJSONValue {
        guard let cut else { return .null }
        return .object([
            ("cause", .string(cut.cause.rawValue)),
            ("unverified", .int(Int64(cut.count))),
            ("paths", .array(cut.paths.map { .string($0.joined(separator: "/")) })),
            ("explanation", .string(cut.explanation)),
        ])
    }

    private static func process(_ summary: ProcessSummary, cuts: [ExitFlushCut]) -> ReportJSONValue {
        .object([
            ("pid", .uint(UInt64(summary.pid))),
            ("name", .string(summary.processName)),
            ("session", .uint(summary.session.rawValue)),
            ("endedNormally", summary.endedNormally.map { .bool($0) } ?? .null),
            ("connectedAtNanos", .uint(summary.connectedAtNanos)),
            ("endedAtNanos", .uint(summary.endedAtNanos)),
            ("leaks", .int(Int64(summary.leaks))),
            ("end", .string(summary.end?.rawValue)),
            ("counts", counts(summary.counts)),
            ("exitFlushCut", exitFlushCut(cuts.first { $0.session == summary.session })),
        ])
    }

    /// A source location: the file as the host's compiler saw it, the same relative to the
    /// source root (null when outside it), and the line.
    private static func site(_ site: SourceSite?, root: String?) -> ReportJSONValue {
        guard let site else { return .null }
        return .object([
            ("file", .string(site.file)),
            ("relativePath", .string(SourcePaths.relative(site.file, to: root))),
            ("line", .int(Int64(site.line))),
        ])
    }

    /// Every test: those the processes named (with their groups, if any), then any other test
    /// that groups name.
    private static func tests(of report: LeakReport) -> [(test: TestInfo, groups: [LeakGroup])] {
        let leaking = report.testsWithGroups
        let groups = Dictionary(leaking.map { ($0.test, $0.groups) }, uniquingKeysWith: { first, _ in first })
        let named = Set(report.tests)
        return report.tests.map { ($0, groups[$0] ?? []) } + leaking.filter { !named.contains($0.test) }
    }

    /// A test: who it is, whether it fails the gate, and the indices of its groups in `leaks`.
    private static func test(_ test: TestInfo, groups: [LeakGroup], outcome: CheckOutcome) -> ReportJSONValue {
        let indices = groups.compactMap { group in
            outcome.groups.firstIndex { $0.fingerprint == group.fingerprint && $0.verdict == group.verdict && $0.test == group.test }
        }
        return .object([
            ("suite", .string(test.suite)),
            ("name", .string(test.name)),
            ("location", site(test.location, root: outcome.report.sourceRoot)),
            ("fails", .bool(groups.contains { $0.fails(strict: outcome.strict, countGlobals: outcome.countGlobals) })),
            ("leaks", .array(indices.map { .int(Int64($0)) })),
        ])
    }

    private static func leak(_ group: LeakGroup, strict: Bool, countGlobals: Bool, root: String?) -> ReportJSONValue {
        let first = group.first
        return .object([
            ("verdict", .string(group.verdict.rawValue)),
            ("known", .bool(group.isKnown)),
            ("fails", .bool(group.fails(strict: strict, countGlobals: countGlobals))),
            ("baselineReason", .string(group.baselineEntry?.reason)),
            ("baselineLine", group.baselineEntry.map { .int(Int64($0.line)) } ?? .null),
            ("fingerprint", .string(group.fingerprint)),
            ("path", .array(group.path.map { .string($0) })),
            ("pathText", .string(group.pathText)),
            ("kind", .string(first.kind)),
            ("attachSite", site(first.attachSite, root: root)),
            (
                "test",
                first.test.map { test in
                    .object([
                        ("suite", .string(test.suite)), ("name", .string(test.name)),
                        ("location", site(test.location, root: root)),
                    ])
                } ?? .null
            ),
            (
                "aliveObjects",
                .array(
                    first.aliveObjects.map { object in
                        .object([("role", .string(object.role)), ("typeName", .string(object.typeName))])
                    })
            ),
            (
                "retainers",
                .array(
                    first.aliveObjects.compactMap { object in
                        first.retainers(ofObject: object.index).map { retainers($0, of: object, root: root) }
                    })
            ),
            ("retainedByGlobal", .bool(group.isRetainedOnlyByGlobals)),
            ("processName", .string(first.processName)),
            ("pid", .uint(UInt64(first.pid))),
            ("detachedAtNanos", .uint(first.detachedAtNanos)),
            ("flaggedAtNanos", .uint(first.flaggedAtNanos)),
            ("delayNanos", .uint(group.delayNanos)),
            ("releasedAtNanos", .uint(first.releasedAtNanos)),
            ("releaseDelayNanos", .uint(first.releaseDelayNanos)),
            ("occurrences", .int(Int64(group.records.count))),
            (
                "instances",
                .array(
                    group.records.map { record in
                        .object([
                            ("pid", .uint(UInt64(record.pid))),
                            ("processName", .string(record.processName)),
                            ("session", .uint(record.session.rawValue)),
                            ("nodeID", .uint(record.nodeID)),
                            ("detachedAtNanos", .uint(record.detachedAtNanos)),
                            ("flaggedAtNanos", .uint(record.flaggedAtNanos)),
                            ("releasedAtNanos", .uint(record.releasedAtNanos)),
                        ])
                    })
            ),
        ])
    }

    /// One alive object's retainer path: the host's data as it sent it, and the path in words.
    private static func retainers(_ path: RetainerPath, of object: ObjectInfo, root: String?) -> ReportJSONValue {
        .object([
            ("objectIndex", .int(Int64(object.index))),
            ("role", .string(object.role)),
            ("typeName", .string(object.typeName)),
            ("verdict", .string(path.verdict.rawValue)),
            ("cutShort", .bool(path.cutShort)),
            ("note", .string(path.note)),
            ("elapsedMicros", .int(Int64(path.elapsedMicros))),
            ("suspectHop", path.suspectIndex.map { .int(Int64($0)) } ?? .null),
            (
                "hops",
                .array(
                    path.hops.map { hop in
                        .object([
                            ("holderKind", .string(hop.holderKind.rawValue)),
                            ("holderNodeID", .uint(hop.holderNodeID)),
                            ("holder", .string(hop.holder)),
                            ("reference", .string(hop.reference)),
                            ("isSuspect", .bool(hop.isSuspect)),
                            ("closure", hop.closure.map { closure($0, root: root) } ?? .null),
                        ])
                    })
            ),
            ("suspectClosure", path.suspectClosure.map { closure($0, root: root) } ?? .null),
            ("text", .string(RetainerText.line(path, objectType: object.typeName))),
        ])
    }

    /// A stored closure on a path: where its code is, and its name and source when known.
    private static func closure(_ closure: RetainerPath.Closure, root: String?) -> ReportJSONValue {
        .object([
            ("symbol", .string(closure.symbol)),
            ("file", .string(closure.file)),
            ("relativePath", .string(closure.file.flatMap { SourcePaths.relative($0, to: root) })),
            ("line", closure.line.map { .int(Int64($0)) } ?? .null),
            ("column", closure.column.map { .int(Int64($0)) } ?? .null),
            ("image", .string(closure.image)),
            ("fileOffset", .uint(closure.fileOffset)),
        ])
    }

    private static func entry(_ entry: Baseline.Entry) -> ReportJSONValue {
        .object([
            ("fingerprint", .string(entry.fingerprint)),
            ("path", .string(entry.path?.text)),
            ("reason", .string(entry.reason)),
            ("line", .int(Int64(entry.line))),
        ])
    }
}
