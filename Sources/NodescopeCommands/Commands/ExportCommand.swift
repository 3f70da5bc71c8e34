import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
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

            The layout and orientation fit the tree's shape: `dot` for small trees that fit as \
            they are, else a tidy tree top-down or left-to-right, or the compact layout, where \
            subtrees hang as indented outlines in columns, so wide trees stay near a page's \
            shape. --layout and --orientation choose by hand. --fit PAGE chooses for a page \
            (a4, a4-landscape, a3, letter, screen, … or WxH such as 1200x800, 210x297mm) and \
            scales the SVG down to it, but never below 8 pt text; when the tree does not fit at \
            that size, a line on standard error says so and suggests --root or --depth.

            An SVG folds long runs of same-named siblings ("… 47 more FeedItemFlow"), keeping \
            every sibling that leaked or awaits release: --max-siblings N sets how long a run may \
            be, --expand draws every node. DOT is data and holds every node unless \
            --max-siblings asks otherwise. JSON is the tree as `tree --json` writes it: the whole \
            tree, or the subtree of --root to --depth levels; the drawing's options (--layout, \
            --orientation, --fit, --max-siblings, --expand) do not apply to it.
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

    @Option(help: "auto, dot, tidy or compact (default auto: what fits the page best).")
    var layout: DiagramLayout = .auto

    @Option(help: "auto, top-down or left-right (default auto: what fits the page best).")
    var orientation: DiagramOrientation = .auto

    @Option(
        help: ArgumentHelp(
            "Choose the layout for this page and scale the SVG down to it, no further than 8 pt text.",
            valueName: "PAGE"))
    var fit: String?

    @Option(help: "Draw only the subtree at this path of node names, e.g. AppFlow/LoggedInFlow.")
    var root: String?

    @Option(parsing: .unconditional, help: "Draw at most this many levels below the root.")
    var depth: Int?

    @OptionGroup var source: SourceOptions

    func validate() throws {
        try source.check(process: process, needsProcess: true)
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        if let maxSiblings, maxSiblings < 1 { throw ValidationError("--max-siblings must be 1 or more") }
        if expand, maxSiblings != nil { throw ValidationError("give either --expand or --max-siblings, not both") }
        if let problem = OutputFile.problem(with: output) { throw ValidationError("cannot write \(output): \(problem)") }
        if let fit, DiagramPage(parsing: fit) == nil {
            throw ValidationError("--fit takes \(DiagramPage.syntax); not '\(fit)'")
        }
        if layout == .compact, orientation == .leftToRight {
            throw ValidationError("the compact layout grows top-down only; use --layout tidy (or dot) with --orientation left-right")
        }
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
        let process = self.process
        let format = resolvedFormat ?? .svg
        if format == .json {
            // The tree, or the subtree of --root to --depth, as `tree --json` writes it, and
            // written as it is made (``TreeJSON``): the one format that needs no layout.
            let (root, depth) = (self.root ?? "", self.depth)
            let view = try await source.withSource(for: process, command: "export") { source in
                try await source.tree(of: process, rootPath: root, depth: depth)
            }
            let writer = try OutputWriter(path: output)
            TreeJSON.write(view) { writer.write(bytes: $0) }
            writer.write("\n")
            try writer.finish()
            let drawing = DiagramRenderer.Drawing(text: "", drawnNodes: view.nodes.count, hiddenNodes: 0)
            if output != "-" { Terminal.note("wrote \(output): " + Self.summary(of: drawing, format: format)) }
            return
        }
        let (view, leaks) = try await source.withSource(for: process, command: "export") { source in
            try await (source.tree(of: process, rootPath: "", depth: nil), source.leaks(of: process))
        }
        if let root, view.node(atPath: root) == nil {
            throw CLIError(
                "no node at \(root) in \(VisibleText.escaped(view.processName)); paths are node names from a root, "
                    + "like AppFlow/LoggedInFlow (or the last names of one, like LoggedInFlow)", exitCode: 1)
        }
        let options = TreeDiagram.Options(
            layout: layout, orientation: orientation, page: fit.flatMap(DiagramPage.init(parsing:)), rootPath: root, depth: depth,
            siblingRunLimit: siblingRunLimit)
        let drawing = try TreeDiagram.draw(view, leaks: leaks, format: format == .dot ? .dot : .svg, options: options)
        try OutputFile.write(drawing.text, to: output)
        if output != "-" { Terminal.note("wrote \(output): " + Self.summary(of: drawing, format: format)) }
        if let fit = drawing.fit, !fit.fits { Terminal.note(Self.overflow(of: fit)) }
    }

    /// Why a drawing does not fit its page, and what to do: `the tree does not fit a4 (595 × 842
    /// pt) at a readable size: …`.
    static func overflow(of fit: DiagramRenderer.PageFit) -> String {
        let width = Int((fit.fullWidth * fit.scale).rounded(.up))
        let height = Int((fit.fullHeight * fit.scale).rounded(.up))
        let pages =
            Int((fit.fullWidth * fit.scale / fit.page.width).rounded(.up))
            * Int((fit.fullHeight * fit.scale / fit.page.height).rounded(.up))
        return "the tree does not fit \(fit.page) at a readable size (8 pt text): it is drawn at "
            + "\(Int((fit.scale * 100).rounded()))%, \(width) × \(height) pt, about \(pages) pages; draw a part with "
            + "--root PATH, or fewer levels with --depth N"
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
extension DiagramOrientation: ExpressibleByArgument {}
