import NodescopeCollector
import NodescopeControlCodec
import NodescopeSymbols
import NodescopeWire

/// Names the stored closures on retainer paths the way a developer finds them: the host sends
/// where a closure's code is (``RetainerPath/Closure``: an image and an offset in it); this
/// reads the image's symbols and debug information on the tools' side (``ClosureSymbolizer``)
/// and fills in the closure's symbol and source line. A closure it cannot name (an image gone,
/// another user's, stripped) keeps its site only, and reports use today's words for it.
package struct ClosureNaming: Sendable {
    /// The symbolizer, which keeps what it found.
    package let symbolizer: ClosureSymbolizer

    package init(symbolizer: ClosureSymbolizer = ClosureSymbolizer()) {
        self.symbolizer = symbolizer
    }

    /// One for the process: its cache serves every question.
    package static let shared = ClosureNaming()

    /// `records` with their closures named.
    package func named(_ records: [LeakRecord]) async -> [LeakRecord] {
        let names = await self.names(of: records.flatMap(\.retainers))
        guard !names.isEmpty else { return records }
        return records.map { record in
            var record = record
            record.retainers = record.retainers.map { Self.fill($0, names) }
            return record
        }
    }

    /// `nodes` with the closures of their retainer paths named.
    package func named(_ nodes: [NodeInfo]) async -> [NodeInfo] {
        let names = await self.names(of: nodes.flatMap { $0.retainers ?? [] })
        guard !names.isEmpty else { return nodes }
        return nodes.map { node in
            var node = node
            node.retainers = node.retainers?.map { Self.fill($0, names) }
            return node
        }
    }

    /// `change` with the closures of the retainer paths it carries named: what a live command
    /// (`attach`, `demo`) prints as it comes says what `tree` and `leaks` say.
    package func named(_ change: TreeChange) async -> TreeChange {
        switch change {
        case .retainersFound(let id, let path, let record):
            let names = await self.names(of: [path] + (record?.retainers ?? []))
            guard !names.isEmpty else { return change }
            var named = record
            named?.retainers = record?.retainers.map { Self.fill($0, names) } ?? []
            return .retainersFound(id: id, path: Self.fill(path, names), record: named)
        case .leakFlagged(let record):
            return .leakFlagged(await self.named([record])[0])
        case .attached(let node):
            return .attached(await self.named([node])[0])
        default:
            return change
        }
    }

    /// `view` with the closures of its nodes' retainer paths named.
    package func named(_ view: TreeView) async -> TreeView {
        guard view.nodes.contains(where: { $0.retainers?.contains { $0.hops.contains { $0.closure != nil } } ?? false }) else {
            return view
        }
        var view = view
        view.nodes = await named(view.nodes)
        return view
    }

    private func names(of paths: [RetainerPath]) async -> [ClosureSite: ClosureName] {
        var sites: [ClosureSite] = []
        var seen = Set<ClosureSite>()
        for path in paths {
            for hop in path.hops {
                if let site = hop.closure?.site, seen.insert(site).inserted { sites.append(site) }
            }
        }
        guard !sites.isEmpty else { return [:] }
        return await symbolizer.names(of: sites)
    }

    /// `closures` named, in order, at once: what a tree's JSON streaming past to a command's
    /// output needs (``TreeJSONClosures``), in one symbolizer run per image for the lot (the
    /// cache serves repeats). The helpers block the caller while they run: for a command, whose
    /// one task waits for them anyway; a server names whole bodies with ``named(body:)``.
    package func namedNow(_ closures: [RetainerPath.Closure]) -> [RetainerPath.Closure] {
        let names = symbolizer.names(of: closures.map(\.site))
        guard !names.isEmpty else { return closures }
        return closures.map { Self.fill($0, names) }
    }

    /// The JSON document `body` (a tree, a change, leak records, anything that holds retainer
    /// paths as ``TreeJSON`` or `JSONEncoder` writes them) with its closures named; the helpers run
    /// off the caller's thread. Every other byte is the body's.
    package func named(body: [UInt8]) async -> [UInt8] {
        var finder = TreeJSONClosures()
        var found: [RetainerPath.Closure] = []
        _ = finder.rewrite(body) { closures in
            found += closures
            return closures
        }
        guard !found.isEmpty else { return body }
        let names = await symbolizer.names(of: found.map(\.site))
        guard !names.isEmpty else { return body }
        var rewriter = TreeJSONClosures()
        let rewritten = rewriter.rewrite(body) { $0.map { Self.fill($0, names) } }
        return rewritten + rewriter.finish()
    }

    private static func fill(_ path: RetainerPath, _ names: [ClosureSite: ClosureName]) -> RetainerPath {
        var path = path
        for index in path.hops.indices {
            if let closure = path.hops[index].closure { path.hops[index].closure = fill(closure, names) }
        }
        return path
    }

    private static func fill(_ closure: RetainerPath.Closure, _ names: [ClosureSite: ClosureName]) -> RetainerPath.Closure {
        // A thunk is the compiler's, not a closure a developer wrote: it keeps its site only
        // (the app's closure it wraps is named on the hop that its context leads through).
        guard let name = names[closure.site], !name.isThunk else { return closure }
        var closure = closure
        closure.symbol = name.symbol
        closure.file = name.file
        closure.line = name.line
        closure.column = name.column
        return closure
    }
}

/// A source whose answers name their closures (``ClosureNaming``): what every reading command
/// and the web view read through. Typed trees and leak records, and the leaks' JSON, are named;
/// the tree's JSON is passed on part by part as the source writes it (a collector's is never
/// decoded whole), its closure objects named on the way (``TreeJSONClosures``), so it says what
/// the typed tree says.
package struct NamedClosures: TreeSource {
    package let base: any TreeSource
    package let naming: ClosureNaming

    package init(_ base: any TreeSource, naming: ClosureNaming = .shared) {
        self.base = base
        self.naming = naming
    }

    package func processes() async throws -> [ProcessSummary] { try await base.processes() }

    package func tree(of process: String?, rootPath: String, depth: Int?) async throws -> TreeView {
        await naming.named(try await base.tree(of: process, rootPath: rootPath, depth: depth))
    }

    package func leaks(of process: String?) async throws -> [LeakRecord] {
        await naming.named(try await base.leaks(of: process))
    }

    package func awaitingRelease(of process: String?, settlingWithin seconds: Double) async throws -> Int {
        try await base.awaitingRelease(of: process, settlingWithin: seconds)
    }

    package func session(of process: String?) async throws -> SessionID { try await base.session(of: process) }

    package func treeBody(
        of process: String?, rootPath: String, depth: Int?, eachPart: ([UInt8]) throws -> Void
    ) async throws {
        var closures = TreeJSONClosures()
        let naming = self.naming
        try await base.treeBody(of: process, rootPath: rootPath, depth: depth) { part in
            let rewritten = closures.rewrite(part) { naming.namedNow($0) }
            if !rewritten.isEmpty { try eachPart(rewritten) }
        }
        let rest = closures.finish()
        if !rest.isEmpty { try eachPart(rest) }
    }

    /// ``treeBody(of:rootPath:depth:eachPart:)`` whole, its closures named off the caller's
    /// thread (``ClosureNaming/named(body:)``): for a server, which answers with the whole body.
    package func treeDocument(of process: String?, rootPath: String, depth: Int?) async throws -> [UInt8] {
        var body: [UInt8] = []
        try await base.treeBody(of: process, rootPath: rootPath, depth: depth) { body += $0 }
        return await naming.named(body: body)
    }

    package func processesBody() async throws -> [UInt8] { try await base.processesBody() }

    package func leaksBody(of process: String?) async throws -> [UInt8] {
        let body = try await base.leaksBody(of: process)
        // Decoded only when a closure is there to name.
        guard body.firstRange(of: Array("\"closure\"".utf8)) != nil else { return body }
        return ControlBody.encode(await naming.named(try ControlBody.decode([LeakRecord].self, from: body)))
    }
}
