import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeGraphviz
import NodescopeServer

/// `nodescope export PID|NAME -o FILE`: the tree as SVG, DOT or JSON.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a process's node tree as an SVG diagram, Graphviz DOT, or JSON.",
        discussion: """
            The format comes from the file's extension (.svg, .dot, .json) unless --format says. \
            With --from, the tree is read from a JSON file written by `export --format json` or \
            `tree --json`, and no collector is needed.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case svg, dot, json
    }

    @Argument(help: "The process: a pid or a process name (not with --from).")
    var process: String?

    @Option(name: .shortAndLong, help: "The file to write; - for standard output.")
    var output: String

    @Option(help: "svg, dot or json (default: from the extension of --output).")
    var format: Format?

    @Option(help: "auto, dot or tidy: the dot engine for small trees, a linear-time tidy layout for large ones.")
    var layout: DiagramLayout = .auto

    @Option(help: "Draw only the subtree at this path of node names, e.g. AppFlow/LoggedInFlow.")
    var root: String?

    @Option(help: "Draw at most this many levels below the root.")
    var depth: Int?

    @Option(help: "Read the tree from this JSON file instead of a collector.")
    var from: String?

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if from == nil, process == nil { throw ValidationError("name a process (pid or name), or give --from FILE") }
        if from != nil, process != nil { throw ValidationError("give either a process or --from, not both") }
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        if resolvedFormat == nil {
            throw ValidationError("cannot tell the format of \(output): use a .svg, .dot or .json name, or --format")
        }
    }

    private var resolvedFormat: Format? {
        format ?? Format(rawValue: (output as NSString).pathExtension.lowercased())
    }

    func run() async throws {
        let view: TreeView
        var leaks: [LeakRecord] = []
        if let from {
            guard let data = FileManager.default.contents(atPath: from) else {
                throw CLIError("cannot read \(from)")
            }
            do {
                view = try JSONDecoder().decode(TreeView.self, from: data)
            } catch {
                throw CLIError("\(from) is not a tree in JSON (as `nodescope export --format json` writes): \(error)")
            }
        } else if let process {
            let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
            (view, leaks) = try await access.run(waitingFor: process) { client in
                do {
                    let view = try await client.request(.tree, argument: process, as: TreeView.self)
                    let leaks = try await client.request(.leaks, argument: process, as: [LeakRecord].self)
                    return (view, leaks)
                } catch let refusal as ControlClient.Refusal {
                    throw CLIError(CollectorAccess.explain(refusal), exitCode: 1)
                }
            }
        } else {
            throw CLIError("name a process or give --from")
        }
        let text = try Self.render(view, leaks: leaks, format: resolvedFormat ?? .svg, layout: layout, root: root, depth: depth)
        try Self.write(text, to: output)
        if output != "-" { Terminal.note("wrote \(output) (\(view.nodes.count) nodes)") }
    }

    /// Renders a tree in a format: the shared path of export, demo and check.
    static func render(
        _ view: TreeView, leaks: [LeakRecord], format: Format, layout: DiagramLayout = .auto,
        root: String? = nil, depth: Int? = nil
    ) throws -> String {
        if format == .json { return String(decoding: ControlBody.encodePretty(view), as: UTF8.self) + "\n" }
        var options = DiagramOptions()
        options.layout = layout
        options.maxDepth = depth
        if let root {
            guard let id = Self.node(at: root, in: view) else {
                throw CLIError("no node at \(root) in \(VisibleText.escaped(view.processName)); paths are node names from a root, like AppFlow/LoggedInFlow", exitCode: 1)
            }
            options.rootID = id
        }
        do {
            return try DiagramRenderer.shared.render(
                DiagramMapping.diagram(for: view, leaks: leaks), format: format == .dot ? .dot : .svg, options: options)
        } catch {
            throw CLIError("cannot draw the diagram: \(error)")
        }
    }

    /// The node at a path of names from a root (each element matches a name or, failing that, a
    /// kind). Among siblings of the same name (a released node and a live one), a live one wins.
    static func node(at path: String, in view: TreeView) -> UInt64? {
        let ids = Set(view.nodes.map(\.id))
        var candidates = view.nodes.filter { node in node.parent.map { !ids.contains($0) } ?? true }
        var found: [NodeInfo] = []
        for element in path.split(separator: "/").map(String.init) {
            found = candidates.filter { $0.name == element }
            if found.isEmpty { found = candidates.filter { $0.kind == element } }
            guard !found.isEmpty else { return nil }
            let parents = Set(found.map(\.id))
            candidates = view.nodes.filter { $0.parent.map(parents.contains) ?? false }
        }
        return (found.first { $0.status.isAttached && !$0.isPlaceholder } ?? found.first)?.id
    }

    static func write(_ text: String, to path: String) throws {
        if path == "-" {
            Terminal.write(text)
            return
        }
        do {
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        } catch {
            throw CLIError("cannot write \(path): \(error.localizedDescription)")
        }
    }
}

extension DiagramLayout: ExpressibleByArgument {}
