import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReports

/// `nodescope diff A B`: two trees compared.
struct DiffCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "diff",
        abstract: "Compare two trees: nodes added, removed and changed (kind, objects, state); exit 1 when they differ.",
        discussion: """
            Each of A and B is a tree in JSON (`export --format json`, `tree --json`), a recording \
            at an instant (FILE, or FILE@TIME with TIME as --at takes it: 12.5, end, event:N, an \
            ISO 8601 time; end by default), or a running or ended process (pid or name) of the \
            collector. Nodes are matched by path (names from the root, #N for the N+1-th sibling \
            of the same name).

            --svg FILE (or -o FILE) also draws the difference: the union of both trees, nodes \
            added in B green and marked +, removed ones red, dashed and marked \u{2212}, changed ones \
            amber with what changed. The exit status is the same with or without it: 0 the \
            same, 1 different, 2 an operand that cannot be read (no such file or process, a file \
            that is no tree) or a file that cannot be written.
            """)

    @Argument(help: "The first tree: a JSON file, a recording[@TIME], or a process.")
    var first: String

    @Argument(help: "The second tree, as the first.")
    var second: String

    @Option(help: "Leave out nodes whose path matches this shell pattern, and their subtrees (repeatable), e.g. '*/FeedItemFlow*'.")
    var ignore: [String] = []

    @Flag(help: "Print the difference as JSON.")
    var json = false

    @Option(
        name: [.customLong("svg"), .customShort("o")],
        help: ArgumentHelp("Also draw the difference as an SVG diagram to this file.", valueName: "FILE"))
    var svg: String?

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if let svg {
            if svg == "-" { throw ValidationError("--svg writes a file (the difference itself goes to standard output); name one") }
            if let problem = OutputFile.problem(with: svg) { throw ValidationError("cannot write \(svg): \(problem)") }
        }
    }

    func run() async throws {
        let left = try await tree(first)
        let right = try await tree(second)
        let diff = TreeDiff.compare(left, right, ignoring: ignore)
        if let svg {
            let summary = "\(diff.added.count) added, \(diff.removed.count) removed, \(diff.changed.count) changed"
            let title = "\(first) \u{2192} \(second): " + (diff.isEmpty ? "the same" : summary)
            let drawing = try DiffDiagram.draw(left, right, ignoring: ignore, title: title)
            try OutputFile.write(drawing.text, to: svg)
            let folded = drawing.hiddenNodes > 0 ? ", \(drawing.hiddenNodes) unchanged ones folded into placeholders" : ""
            Terminal.note("wrote \(svg): \(drawing.drawnNodes) nodes drawn\(folded)")
        }
        Terminal.write(json ? Terminal.prettyJSON(diff) : diff.text())
        if !diff.isEmpty { throw ExitCode(1) }
    }

    /// The tree an operand names: a file (FILE, or FILE@TIME for a recording) or a process.
    private func tree(_ operand: String) async throws -> TreeView {
        var options = try SourceOptions.parse([])
        options.connection = connection
        options.waiting = waiting
        var process: String? = operand
        let mark = operand.lastIndex(of: "@")
        if FileManager.default.fileExists(atPath: operand) || (mark == nil && Self.isFile(operand)) {
            (options.from, process) = (operand, nil)
        } else if let mark, Self.isFile(String(operand[..<mark])) {
            (options.from, process) = (String(operand[..<mark]), nil)
            options.replay.at = String(operand[operand.index(after: mark)...])
            do {
                _ = try options.replay.instant()
            } catch {
                throw CLIError("\(operand): \(error)", exitCode: 2)
            }
        }
        do {
            return try await options.withSource(for: process, command: "diff") { source in
                try await source.tree(of: process, rootPath: "", depth: nil)
            }
        } catch let error as CLIError where options.from != nil {
            // A file that is no tree is a usage error here: diff's 1 means "they differ".
            throw CLIError(error.message, exitCode: 2)
        } catch let refusal as ControlClient.Refusal where options.from != nil {
            throw CLIError("\(options.from ?? operand): \(refusal.description)", exitCode: 2)
        } catch  where options.from == nil {
            // No process to compare (none connected, no collector): an error, not a difference.
            guard let failure = CLIError(error) else { throw error }
            throw CLIError(failure.message, exitCode: 2, underlying: failure.underlying)
        }
    }

    /// Whether `path` is read as a file: one that exists, or one that looks like a file's path (a
    /// slash, which no process name has, or a tree's or recording's extension). A mistyped file is
    /// then refused at once, as every `--from` is (`cannot read …: no such file`, exit 2), not
    /// waited for as a process.
    private static func isFile(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path) || path.contains("/")
            || [".json", ".nsrec"].contains { path.lowercased().hasSuffix($0) }
    }
}
