import NodescopeCollector

/// `check --sarif` and `leaks --format sarif`: SARIF 2.1.0 for code-scanning tools. The driver "nodescope" has three rules
/// (node-leak, node-leak-unverified, node-late-release); each leak group is one result, at
/// level error (new leak), warning (late release, or unverified; error with --strict) or note
/// (known, with an external suppression carrying the baseline's reason). A result's
/// `partialFingerprints["nodescopeFingerprint/v1"]` is the leak fingerprint, and its logical
/// location is the node's path (`fullyQualifiedName` "A/B/C").
package enum ReportSARIF {
    static let rules: [(id: String, name: String, level: String, short: String, full: String)] = [
        (
            "node-leak", "NodeLeak", "error",
            "A detached node is still alive after the grace.",
            "A node of the tree (flow, context, workers, view) still had live objects when the grace after its detach ran out. "
                + "Something keeps a reference to it: a retain cycle, a long-lived object holding its context, a subscription that was not cancelled."
        ),
        (
            "node-leak-unverified", "NodeLeakUnverified", "warning",
            "A detached node was alive when its process ended abnormally, within the grace.",
            "The process ended (crash, kill, or exit without the exit hold) before the grace after the node's detach ran out, "
                + "with some of its objects alive: whether they would have been released is unknown. It fails the gate only with --strict."
        ),
        (
            "node-late-release", "NodeLateRelease", "warning",
            "A detached node was released, but only after the grace.",
            "Every object of the node was released in the end, later than the grace after its detach. It is a warning: "
                + "something holds the node longer than expected (a timer, a pending request)."
        ),
        (
            "node-retained-by-global", "NodeRetainedByGlobal", "note",
            "A detached node is still alive after the grace, held only by a global variable.",
            "Every alive object of the node is held directly by a global or static variable (such as a top-level `let app` "
                + "in main.swift that keeps the app until the process exits). It is not counted as a leak unless "
                + "nodescope check is given --count-globals; then it is a node-leak."
        ),
    ]

    /// The SARIF log. A check run's invocation carries the command's exit code or signal and
    /// whether the collector could report; a report of a collector carries the reading command
    /// line and no result of any command.
    package static func render(_ subject: ReportSubject) -> String {
        let report = subject.report
        var invocation: [(String, ReportJSONValue)] = [
            ("executionSuccessful", .bool(subject.outcome?.collectorFailure == nil)),
            ("commandLine", .string(subject.commandLine.joined(separator: " "))),
            ("arguments", .array(subject.commandLine.map { .string($0) })),
        ]
        if let outcome = subject.outcome {
            switch outcome.termination {
            case .exited(let status):
                invocation.append(("exitCode", .int(Int64(status))))
            case .signaled(let signal):
                invocation.append(("exitSignalName", .string(CheckTermination.name(of: signal))))
                invocation.append(("exitSignalNumber", .int(Int64(signal))))
            }
        }
        let driver: ReportJSONValue = .object([
            ("name", .string("nodescope")),
            (
                "rules",
                .array(
                    rules.map { rule in
                        .object([
                            ("id", .string(rule.id)),
                            ("name", .string(rule.name)),
                            ("shortDescription", .object([("text", .string(rule.short))])),
                            ("fullDescription", .object([("text", .string(rule.full))])),
                            ("defaultConfiguration", .object([("level", .string(rule.level))])),
                            (
                                "help",
                                .object([
                                    (
                                        "text",
                                        .string(
                                            "Find what keeps the node's alive objects (listed in the result) after its detach. "
                                                + "If the leak is accepted for now, add its fingerprint with a reason to the baseline file."
                                        )
                                    )
                                ])
                            ),
                        ])
                    })
            ),
        ])
        var properties: [(String, ReportJSONValue)] = [
            ("graceNanos", .uint(report.graceNanos)),
            ("strict", .bool(report.strict)),
            ("countGlobals", .bool(report.countGlobals)),
        ]
        if let outcome = subject.outcome { properties.append(("exitCode", .int(Int64(outcome.exitCode)))) }
        properties.append(("staleBaselineEntries", .array(report.staleEntries.map { .string($0.label) })))
        var runMembers: [(String, ReportJSONValue)] = [("tool", .object([("driver", driver)]))]
        if let root = report.sourceRoot {
            let directory = root.hasSuffix("/") ? root : root + "/"
            runMembers.append(
                (
                    "originalUriBaseIds",
                    .object([
                        (
                            sourceRootID,
                            .object([
                                ("uri", .string(SourcePaths.fileURI(directory))),
                                ("description", .object([("text", .string("The repository's root."))])),
                            ])
                        )
                    ])
                ))
        }
        let run: ReportJSONValue = .object(
            runMembers + [
                ("invocations", .array([.object(invocation)])),
                ("results", .array(report.groups.map { result($0, in: report) } + report.exitFlushCuts.map { result($0, in: report) })),
                ("properties", .object(properties)),
            ])
        return ReportJSONValue.object([
            ("$schema", .string("https://json.schemastore.org/sarif-2.1.0.json")),
            ("version", .string("2.1.0")),
            ("runs", .array([run])),
        ]).rendered()
    }

    /// The id of the repository's root in `originalUriBaseIds`.
    static let sourceRootID = "%SRCROOT%"

    /// A physical location of `site`: relative to the repository's root when it is under it.
    private static func physicalLocation(_ site: SourceSite, root: String?) -> ReportJSONValue {
        let artifact: ReportJSONValue
        if let relative = SourcePaths.relative(site.file, to: root) {
            artifact = .object([("uri", .string(SourcePaths.percentEncoded(relative))), ("uriBaseId", .string(sourceRootID))])
        } else if site.file.hasPrefix("/") {
            artifact = .object([("uri", .string(SourcePaths.fileURI(site.file)))])
        } else {
            artifact = .object([("uri", .string(SourcePaths.percentEncoded(site.file)))])
        }
        return .object([
            ("artifactLocation", artifact),
            ("region", .object([("startLine", .int(Int64(max(site.line, 1))))])),
        ])
    }

    /// One result for a process whose exit flush was cut, however many nodes it left unverified:
    /// the count, the way to avoid it, and the first paths; its logical location is the process.
    private static func result(_ cut: ExitFlushCut, in report: LeakReport) -> ReportJSONValue {
        let examples = cut.paths.map { $0.joined(separator: "/") }
        let text =
            "\(VisibleText.escaped(cut.processText)): \(cut.explanation)."
            + (examples.isEmpty ? "" : " For example: " + examples.map(VisibleText.escaped).joined(separator: ", ") + ".")
        return .object([
            ("ruleId", .string("node-leak-unverified")),
            ("ruleIndex", .int(Int64(rules.firstIndex { $0.id == "node-leak-unverified" } ?? 1))),
            ("level", .string(report.strict ? "error" : "warning")),
            ("message", .object([("text", .string(text))])),
            (
                "locations",
                .array([
                    .object([
                        (
                            "logicalLocations",
                            .array([
                                .object([
                                    ("name", .string(cut.processName)), ("fullyQualifiedName", .string(cut.processText)),
                                    ("kind", .string("module")),
                                ])
                            ])
                        )
                    ])
                ])
            ),
            (
                "partialFingerprints",
                .object([
                    (
                        "nodescopeFingerprint/v1",
                        .string((cut.cause == .exitFlushCut ? "exit-flush-cut:" : "ended-abnormally:") + cut.processName)
                    )
                ])
            ),
            (
                "properties",
                .object([
                    ("exitFlushCut", .bool(cut.cause == .exitFlushCut)), ("cause", .string(cut.cause.rawValue)),
                    ("unverifiedNodes", .int(Int64(cut.count))),
                    ("pid", .uint(UInt64(cut.pid))), ("paths", .array(examples.map { .string($0) })),
                ])
            ),
        ])
    }

    private static func result(_ group: LeakGroup, in report: LeakReport) -> ReportJSONValue {
        let (strict, countGlobals) = (report.strict, report.countGlobals)
        let level: String
        let uncountedGlobal = group.isUncountedGlobal(countGlobals: countGlobals)
        if group.isKnown || uncountedGlobal {
            level = "note"
        } else {
            switch group.verdict {
            case .leaked: level = "error"
            case .unverified: level = strict ? "error" : "warning"
            case .lateRelease: level = "warning"
            }
        }
        let what = "\(Vocabulary.phrase(group.verdict)): \(group.explanation)"
        var text =
            "\(group.first.kind) \(group.pathText) \(what), in \(group.processesText). "
            + "Alive: \(group.aliveText). Fingerprint \(group.fingerprint)"
            + (group.records.count > 1 ? ", \(group.records.count) occurrences." : ".")
        let explained = explainedObjects(of: group)
        for (object, path) in explained {
            text += " Why \(RetainerText.objectName(object)) is alive: \(RetainerText.line(path, objectType: object.typeName))."
        }
        if let site = group.attachSite { text += " Attached at \(SourcePaths.text(site, root: report.sourceRoot))." }
        if let test = group.test { text += " Under test \(test.description)." }
        if uncountedGlobal { text += " It is \(Vocabulary.globalNotCounted)." }
        if let entry = group.baselineEntry { text += " Known (baseline): \(entry.reason)" }
        let ruleID = group.ruleID(countGlobals: countGlobals)
        let index = rules.firstIndex { $0.id == ruleID } ?? 0
        var members: [(String, ReportJSONValue)] = [
            ("ruleId", .string(ruleID)),
            ("ruleIndex", .int(Int64(index))),
            ("level", .string(level)),
            ("message", .object([("text", .string(text))])),
            (
                "locations",
                .array([
                    .object(
                        (group.attachSite.map { [("physicalLocation", physicalLocation($0, root: report.sourceRoot))] } ?? []) + [
                            (
                                "logicalLocations",
                                .array([
                                    .object([
                                        ("name", .string(group.path.last ?? "")),
                                        ("fullyQualifiedName", .string(group.pathText)),
                                        ("kind", .string("type")),
                                    ])
                                ])
                            )
                        ])
                ])
            ),
            ("partialFingerprints", .object([("nodescopeFingerprint/v1", .string(group.fingerprint))])),
        ]
        var related = relatedLocations(explained, root: report.sourceRoot)
        if let closure = group.suspectClosure, let source = closure.source {
            // The line to change: where the closure that the suspect reference keeps is written.
            let symbol = closure.symbol.map { " (\($0))" } ?? ""
            related.append(
                .object([
                    ("id", .int(Int64(related.count + 1))),
                    (
                        "message",
                        .object([("text", .string("the closure that the suspect reference keeps\(symbol): the line to change"))])
                    ),
                    ("physicalLocation", physicalLocation(source, root: report.sourceRoot)),
                ]))
        }
        if let test = group.test {
            var location: [(String, ReportJSONValue)] = [
                ("id", .int(Int64(related.count + 1))),
                ("message", .object([("text", .string("the test the node was attached under: \(test.description)"))])),
            ]
            if let site = test.location { location.append(("physicalLocation", physicalLocation(site, root: report.sourceRoot))) }
            location.append(
                (
                    "logicalLocations",
                    .array([
                        .object([
                            ("name", .string(test.name)), ("fullyQualifiedName", .string(test.description)),
                            ("kind", .string("function")),
                        ])
                    ])
                ))
            related.append(.object(location))
        }
        if !related.isEmpty { members.append(("relatedLocations", .array(related))) }
        members.append(("baselineState", .string(group.isKnown ? "unchanged" : "new")))
        if let entry = group.baselineEntry {
            members.append(
                (
                    "suppressions",
                    .array([
                        .object([
                            ("kind", .string("external")),
                            ("status", .string("accepted")),
                            ("justification", .string(entry.reason)),
                        ])
                    ])
                ))
        }
        members.append(
            (
                "properties",
                .object([
                    ("occurrences", .int(Int64(group.records.count))),
                    ("processes", .array(group.records.map { .string("\($0.processName) [pid \($0.pid)]") })),
                    ("aliveObjects", .array(group.first.aliveObjects.map { .string("\($0.role) \($0.typeName)") })),
                    ("delayNanos", .uint(group.delayNanos)),
                    ("retainedByGlobal", .bool(group.isRetainedOnlyByGlobals)),
                    (
                        "retainers",
                        .array(
                            explained.map { object, path in
                                .string("\(RetainerText.objectName(object)): \(RetainerText.line(path, objectType: object.typeName))")
                            })
                    ),
                ])
            ))
        return .object(members)
    }

    /// The alive objects of the group's first record that have a retainer path, with it.
    private static func explainedObjects(of group: LeakGroup) -> [(ObjectInfo, RetainerPath)] {
        group.first.aliveObjects.compactMap { object in group.first.retainers(ofObject: object.index).map { (object, $0) } }
    }

    /// One related location per hop of each path: the holder as a logical location (a member,
    /// an element, a global variable, or an object), the hop in words as its message.
    private static func relatedLocations(_ explained: [(ObjectInfo, RetainerPath)], root: String?) -> [ReportJSONValue] {
        var locations: [ReportJSONValue] = []
        for (object, path) in explained {
            for (position, hop) in path.hops.enumerated() {
                let next =
                    position + 1 < path.hops.count
                    ? VisibleText.escaped(path.hops[position + 1].holder) : VisibleText.escaped(object.typeName)
                var message =
                    "\(RetainerText.objectName(object)), \(path.verdict == .cycle ? "retain cycle" : "retainer path") hop \(position + 1) "
                    + "of \(path.hops.count): \(RetainerText.reference(hop)) \(Vocabulary.referenceArrow) \(next)"
                if hop.isSuspect { message += " (\(Vocabulary.suspect))" }
                let (name, qualified, kind) = logicalLocation(of: hop)
                // A stored closure's hop is also where the closure is written.
                var physical: [(String, ReportJSONValue)] = []
                if let closure = hop.closure, let source = closure.source {
                    message += "; the closure: " + (RetainerText.closureName(closure, root: root) ?? "")
                    physical = [("physicalLocation", physicalLocation(source, root: root))]
                }
                locations.append(
                    .object(
                        [
                            ("id", .int(Int64(locations.count + 1))),
                            ("message", .object([("text", .string(message))])),
                        ] + physical + [
                            (
                                "logicalLocations",
                                .array([
                                    .object([("name", .string(name)), ("fullyQualifiedName", .string(qualified)), ("kind", .string(kind))])
                                ])
                            )
                        ]))
            }
        }
        return locations
    }

    /// The logical location of a hop's reference: its `name`, `fullyQualifiedName` and `kind`
    /// (docs/CHECK.md): `variable` for a global, `element` for a collection element (a reference
    /// that ends in a subscript, `.listeners[3]` or `[2]`), `member` for a field (`.session`),
    /// `object` otherwise (a closure's capture, an unnamed reference).
    static func logicalLocation(of hop: RetainerPath.Hop) -> (name: String, qualified: String, kind: String) {
        let reference = hop.reference
        if hop.holderKind == .global { return (hop.holder, hop.holder, "variable") }
        if reference.hasPrefix(".") || reference.hasPrefix("[") {
            let name = reference.hasPrefix(".") ? String(reference.dropFirst()) : reference
            return (name, hop.holder + reference, reference.hasSuffix("]") ? "element" : "member")
        }
        return (hop.holder, reference.isEmpty ? hop.holder : "\(hop.holder) (\(reference))", "object")
    }
}
