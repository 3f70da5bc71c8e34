import NodescopeCollector

/// Retainer paths as people read them, in the words of ``Vocabulary``: a block of lines for
/// reports, one line for messages and tooltips, a few words for notes.
///
/// Every name from the host is escaped for a terminal (``VisibleText``); each output format
/// escapes the text again as it requires.
package enum RetainerText {
    /// The block that explains one object, without indentation:
    ///
    /// ```
    /// held by  AppFlowImp (attached node)
    ///          ─ .component ─▶ AppComponent
    ///          ─ .listeners[3] ─▶ closure context   ◀ suspect: the reference to cut
    ///          ─ capture ─▶ ProfileContextImp
    /// ```
    ///
    /// or `retain cycle: A ─ .b ─▶ B ─ .a ─▶ A`, `retained by global` and the global's name in
    /// backticks, `holder unknown: …`, `not analyzed: …`; then a line when the analysis was cut
    /// short, or when the host added a note. `objectType` names the object the path ends at.
    package static func lines(_ path: RetainerPath, objectType: String) -> [String] {
        var lines: [String] = []
        let object = VisibleText.escaped(objectType)
        switch path.verdict {
        case .cycle where !path.hops.isEmpty:
            let start = "retain cycle: "
            // The first holder is the object itself: its name is enough.
            lines.append(start + chain(path.hops, objectType: object, first: VisibleText.escaped(path.hops[0].holder)))
            if let suspect = path.suspectIndex {
                let pad = String(repeating: " ", count: start.count)
                lines.append(pad + Vocabulary.suspectLine(reference(path.hops[suspect])) + madeAt(path))
            }
        case .global:
            lines.append(Vocabulary.retainedByGlobal([VisibleText.escaped(path.globalName ?? "?")]))
        case .holder where !path.hops.isEmpty, .stack where !path.hops.isEmpty:
            let start = "held by  "
            let pad = String(repeating: " ", count: start.count)
            lines.append(start + holderName(path.hops[0]))
            for (index, hop) in path.hops.enumerated() {
                let next = index + 1 < path.hops.count ? holderName(path.hops[index + 1]) : object
                let line =
                    pad
                    + step(
                        hop, to: next,
                        nextIsContext: path.hops.indices.contains(index + 1) && path.hops[index + 1].holderKind == .closureContext)
                lines.append(hop.isSuspect ? line + "   " + Vocabulary.suspectMark + madeAt(path) : line)
            }
        case .stack:
            lines.append(stackHolder(path))
        case .cycle, .holder:
            lines.append(path.verdict == .cycle ? "retain cycle: no hop named" : "held by: no path found")
        case .unknown:
            lines.append(Vocabulary.unknownHolder)
        case .notAnalyzed:
            lines.append("not analyzed: " + (path.note.isEmpty ? "the host gave no reason" : VisibleText.escaped(path.note)))
        }
        if path.cutShort {
            lines.append("cut short: " + (path.note.isEmpty ? Vocabulary.cutShort : VisibleText.escaped(path.note)))
        } else if path.verdict != .notAnalyzed, !path.note.isEmpty {
            lines.append("note: " + VisibleText.escaped(path.note))
        }
        return lines
    }

    /// The path on one line, for messages and tooltips: `held by AppFlowImp (attached node) ─
    /// .component ─▶ AppComponent ─ … ─▶ ProfileContextImp; suspect: Session.listeners[3]`.
    package static func line(_ path: RetainerPath, objectType: String) -> String {
        let object = VisibleText.escaped(objectType)
        var text: String
        switch path.verdict {
        case .cycle where !path.hops.isEmpty:
            text = "retain cycle: " + chain(path.hops, objectType: object, first: VisibleText.escaped(path.hops[0].holder))
        case .holder where !path.hops.isEmpty, .stack where !path.hops.isEmpty:
            text = "held by " + chain(path.hops, objectType: object, first: holderName(path.hops[0]))
        default:
            text = lines(path, objectType: objectType)[0]
        }
        if path.verdict != .global, let suspect = path.suspectIndex {
            text += "; suspect: " + reference(path.hops[suspect]) + madeAt(path)
        }
        if path.cutShort { text += "; cut short" }
        return text
    }

    /// A few words for notes: `held by Session.listeners[3]`, `retain cycle through
    /// Session.listeners[0]`, `retained by global` and the name, `held by a thread's stack`,
    /// `holder unknown`, `not analyzed`; `(cut short)` after a path cut short.
    package static func summary(_ path: RetainerPath) -> String {
        var text: String
        switch path.verdict {
        case .cycle:
            text = path.keyHop.map { "retain cycle through " + reference($0) } ?? "retain cycle"
        case .holder:
            text = path.keyHop.map { "held by " + reference($0) } ?? "holder not found"
        case .global:
            text = Vocabulary.retainedByGlobal([VisibleText.escaped(path.globalName ?? "?")])
        case .stack:
            text = stackHolder(path)
        case .unknown:
            text = "holder unknown"
        case .notAnalyzed:
            text = "not analyzed"
        }
        return path.cutShort ? text + " (cut short)" : text
    }

    /// What a `stack` verdict is held by: `held by an async task` when its path goes through a
    /// task's memory (a local of an async function, or what one leads to), else `held by a
    /// thread's stack`.
    package static func stackHolder(_ path: RetainerPath) -> String {
        path.hops.contains { $0.holderKind == .unknownMemory && $0.holder.hasPrefix("async ") }
            ? "held by an async task" : "held by a thread's stack"
    }

    /// A closure as a developer finds it: `closure #1 in ProfileContextImp.didBecomeActive()
    /// (ProfileNode.swift:20)`; its source as `root` makes it relative when given, else by the
    /// file's name. Nil when the tools could not name it (its image unreadable, stripped).
    package static func closureName(_ closure: RetainerPath.Closure, root: String? = nil) -> String? {
        guard let symbol = closure.symbol else { return nil }
        guard let location = closureLocation(closure, root: root) else { return VisibleText.escaped(symbol) }
        return "\(VisibleText.escaped(symbol)) (\(VisibleText.escaped(location)))"
    }

    /// `ProfileNode.swift:20` (or relative to `root`): where a closure is written, when known.
    package static func closureLocation(_ closure: RetainerPath.Closure, root: String? = nil) -> String? {
        closure.source.map { SourcePaths.text($0, root: root) }
    }

    /// `, made at ProfileNode.swift:20`: where the closure that the suspect reference keeps is
    /// written, the line to change; empty when unknown.
    package static func madeAt(_ path: RetainerPath, root: String? = nil) -> String {
        guard let closure = path.suspectClosure, let location = closureLocation(closure, root: root) else { return "" }
        return ", made at \(VisibleText.escaped(location))"
    }

    /// A hop's holder and reference as one name: `Session.listeners[3]` for a field or an
    /// element, `closure context (capture)` otherwise.
    package static func reference(_ hop: RetainerPath.Hop) -> String {
        let holder = VisibleText.escaped(hop.holder)
        let reference = VisibleText.escaped(hop.reference)
        if reference.isEmpty { return holder }
        if reference.hasPrefix(".") || reference.hasPrefix("[") { return holder + reference }
        return "\(holder) (\(reference))"
    }

    /// The report lines that explain the alive objects of `record` that have a path, to go
    /// under its `alive:` line: the block of ``lines(_:objectType:)`` indented by four spaces
    /// for a node with one alive object; for several, each object's role and type, then its
    /// block indented by six. Empty when no alive object has a path.
    package static func reportLines(_ record: LeakRecord) -> [String] {
        let explained = record.aliveObjects.compactMap { object in record.retainers(ofObject: object.index).map { (object, $0) } }
        guard !explained.isEmpty else { return [] }
        if record.aliveObjects.count == 1, let (object, path) = explained.first {
            return lines(path, objectType: object.typeName).map { "    " + $0 }
        }
        var result: [String] = []
        for (object, path) in explained {
            result.append("    " + VisibleText.escaped(objectName(object)))
            result += lines(path, objectType: object.typeName).map { "      " + $0 }
        }
        return result
    }

    /// The globals that hold a record retained only by globals (empty otherwise).
    package static func globalNames(_ record: LeakRecord) -> [String] {
        guard record.isRetainedOnlyByGlobals else { return [] }
        var names: [String] = []
        for path in record.retainers {
            if let name = path.globalName, !names.contains(name) { names.append(name) }
        }
        return names
    }

    /// `context ProfileContextImp`: an object as reports name it.
    static func objectName(_ object: ObjectInfo) -> String {
        "\(object.role.isEmpty ? "object" : object.role) \(object.typeName)"
    }

    /// `A ─ .b ─▶ B ─ .a ─▶ A`: the hops to the object, after `first` (the first holder's name)
    /// when given.
    private static func chain(_ hops: [RetainerPath.Hop], objectType: String, first: String?) -> String {
        var text = first ?? ""
        for index in hops.indices {
            let next = index + 1 < hops.count ? holderName(hops[index + 1]) : objectType
            text += text.isEmpty ? "" : " "
            let nextIsContext = index + 1 < hops.count ? hops[index + 1].holderKind == .closureContext : false
            text += step(hops[index], to: next, nextIsContext: nextIsContext)
        }
        return text
    }

    /// A holder's name with what its kind adds: `AppFlowImp (attached node)`; for a node's
    /// object whose node the collector knew, the node by its path and occurrence:
    /// `SettingsSyncWorker (attached node AppFlow › LoggedInFlow#2 › SettingsFlow)`.
    private static func holderName(_ hop: RetainerPath.Hop) -> String {
        let name = VisibleText.escaped(hop.holder)
        guard let word = Vocabulary.word(hop.holderKind), word != hop.holder else { return name }
        if let path = hop.holderNodePath, !path.isEmpty {
            return "\(name) (\(word) \(path.map(VisibleText.escaped).joined(separator: " › ")))"
        }
        return "\(name) (\(word))"
    }

    /// `─ .listeners[3] ─▶ Session`: a hop's reference and where it leads; `─▶ Session` when
    /// the holder itself is the reference (a global variable, a stack slot). A closure's context
    /// is named by its closure when the tools named it: `─ .listeners[0] ─▶ closure #1 in
    /// ProfileContextImp.didBecomeActive() (ProfileNode.swift:20)`.
    private static func step(_ hop: RetainerPath.Hop, to next: String, nextIsContext: Bool) -> String {
        var (reference, next) = (VisibleText.escaped(hop.reference), next)
        if let name = hop.closure.flatMap({ closureName($0) }) {
            // The closure's context is the next holder (a box of its captures), or, for a
            // closure that captures one object only, that object itself.
            if nextIsContext { next = name } else { reference += ": " + name }
        }
        guard !reference.isEmpty else { return "\(Vocabulary.referenceArrow) \(next)" }
        return "\(Vocabulary.referenceLead) \(reference) \(Vocabulary.referenceArrow) \(next)"
    }
}
