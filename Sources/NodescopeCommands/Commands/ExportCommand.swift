import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeGraphviz
import NodescopeReports

/// `nodescope export PID|NAME -o FILE`: the tree as SVG, DOT or JSON.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Write a process's node tree as an SVG diagram, Graphviz DOT, or JSON.",
        discussion: """
            The format comes from the file's extension (.svg, .dot, .json) unless --format says; \
            to standard output (-o -) it is SVG unless --format says. With --from, the tree is \
            read from a JSON file written by `export --format json` or `tree --json`, and no \
            collector is needed.

            An SVG folds long runs of same-named siblings ("… 47 more FeedItemFlow"), keeping \
            every sibling that leaked or awaits release: --max-siblings N sets how long a run may \
            be, --expand draws every node. DOT and JSON are data and hold every node unless \
            --max-siblings asks otherwise.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case svg, dot, json
    }

    @Argument(help: "The process: a pid or a process name (not with --from).")
    var process: String?

    @Option(name: .shortAndLong, help: "The file to write; - for standard output.")
    var output: String

    @Option(help: "svg, dot or json (default: from the extension of --output; svg for -).")
    var format: Format?

    @Option(
        name: .customLong("max-siblings"), parsing: .unconditional,
        help: "Fold runs of more than N same-named siblings into one placeholder (default: 12 in SVG, none in DOT).")
    var maxSiblings: Int?

    @Flag(help: "Draw every node: fold no sibling runs.")
    var expand = false

    @Option(help: "auto, dot or tidy: the dot engine for small trees, a linear-time tidy layout for large ones.")
    var layout: DiagramLayout = .auto

    @Option(help: "Draw only the subtree at this path of node names, e.g. AppFlow/LoggedInFlow.")
    var root: String?

    @Option(parsing: .unconditional, help: "Draw at most this many levels below the root.")
    var depth: Int?

    @Option(help: "Read the tree from this JSON file instead of a collector.")
    var from: String?

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if from == nil, process == nil { throw ValidationError("name a process (pid or name), or give --from FILE") }
        if let process, process.isEmpty { throw ValidationError("the process is empty: give a pid or a process name") }
        if from != nil, process != nil { throw ValidationError("give either a process or --from, not both") }
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        if let maxSiblings, maxSiblings < 1 { throw ValidationError("--max-siblings must be 1 or more") }
        if expand, maxSiblings != nil { throw ValidationError("give either --expand or --max-siblings, not both") }
        if let problem = OutputFile.problem(with: output) { throw ValidationError("cannot write \(output): \(problem)") }
        if resolvedFormat == nil {
            throw ValidationError("cannot tell the format of \(output): use a .svg, .dot or .json name, or --format")
        }
    }

    private var resolvedFormat: Format? {
        if let format { return format }
        return output == "-" ? .svg : Format(rawValue: (output as NSString).pathExtension.lowercased())
    }

    /// Sibling runs longer than this fold: `--max-siblings`, none with `--expand`, and by
    /// default the renderer's for SVG and none for DOT (data that tools read whole).
    private var siblingRunLimit: Int? {
        if expand { return .max }
        if let maxSiblings { return maxSiblings }
        return resolvedFormat == .dot ? .max : nil
    }

    func run() async throws {
        let view: TreeView
        var leaks: [LeakRecord] = []
        if let from {
            let data = Data(try InputFile.read(from))
            guard !data.isEmpty else {
                throw CLIError("\(from) is empty, not a tree in JSON (as `nodescope export --format json` writes)")
            }
            do {
                view = try JSONDecoder().decode(TreeView.self, from: data)
            } catch {
                throw CLIError("\(from) is not a tree in JSON (as `nodescope export --format json` writes): \(error)")
            }
        } else if let process {
            let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
            (view, leaks) = try await access.run(waitingFor: process) { client in
                try await (
                    client.request(.tree, argument: process, as: TreeView.self),
                    client.request(.leaks, argument: process, as: [LeakRecord].self)
                )
            }
        } else {
            throw CLIError("name a process or give --from")
        }
        let format = resolvedFormat ?? .svg
        let drawing: DiagramRenderer.Drawing
        switch format {
        case .json:
            drawing = DiagramRenderer.Drawing(text: Terminal.prettyJSON(view), drawnNodes: view.nodes.count, hiddenNodes: 0)
        case .svg, .dot:
            if let root, view.node(atPath: root) == nil {
                throw CLIError(
                    "no node at \(root) in \(VisibleText.escaped(view.processName)); paths are node names from a root, "
                        + "like AppFlow/LoggedInFlow (or the last names of one, like LoggedInFlow)", exitCode: 1)
            }
            let options = TreeDiagram.Options(layout: layout, rootPath: root, depth: depth, siblingRunLimit: siblingRunLimit)
            drawing = try TreeDiagram.draw(view, leaks: leaks, format: format == .dot ? .dot : .svg, options: options)
        }
        try OutputFile.write(drawing.text, to: output)
        if output != "-" { Terminal.note("wrote \(output): " + Self.summary(of: drawing, format: format)) }
    }

    /// How much of the tree a file holds: `20 of 10205 nodes drawn, 10185 folded into
    /// placeholders (--expand draws them all)`.
    static func summary(of drawing: DiagramRenderer.Drawing, format: Format) -> String {
        let total = drawing.drawnNodes + drawing.hiddenNodes
        let noun = total == 1 ? "node" : "nodes"
        guard format != .json else { return "\(total) \(noun)" }
        guard drawing.hiddenNodes > 0 else { return "all \(total) \(noun) drawn" }
        return "\(drawing.drawnNodes) of \(total) \(noun) drawn, \(drawing.hiddenNodes) folded into placeholders "
            + "(--expand draws every node, --depth and --root choose a part)"
    }
}

extension DiagramLayout: ExpressibleByArgument {}
