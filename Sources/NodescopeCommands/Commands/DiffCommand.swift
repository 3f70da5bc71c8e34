import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReplay
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
            amber with what changed. The exit status is the same with or without it.
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

    /// The tree an operand names.
    private func tree(_ operand: String) async throws -> TreeView {
        var file = operand
        var at: String?
        if !FileManager.default.fileExists(atPath: operand), let mark = operand.lastIndex(of: "@"),
            FileManager.default.fileExists(atPath: String(operand[..<mark]))
        {
            file = String(operand[..<mark])
            at = String(operand[operand.index(after: mark)...])
        }
        if FileManager.default.fileExists(atPath: file) {
            if try RecordingInput.isRecording(file) {
                var options = ReplayOptions()
                options.at = at
                let instant: ReplayInstant
                do {
                    instant = try options.instant()
                } catch {
                    throw CLIError("\(operand): \(error)", exitCode: 2)
                }
                let replayed = try RecordingInput.replay(file, at: instant)
                guard let view = replayed.collector.tree(replayed.session) else {
                    throw CLIError("\(file) holds no process at that instant", exitCode: 2)
                }
                return view
            }
            do {
                let bytes = try InputFile.read(file, bound: InputFile.Bound.treeJSON, what: "a tree in JSON")
                return try TreeJSONReader.decode(bytes)
            } catch let error as CLIError {
                throw error
            } catch {
                throw CLIError(
                    "\(file) is neither a recording nor a tree in JSON (as `nodescope export --format json` writes)", exitCode: 2)
            }
        }
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        return try await access.run(waitingFor: operand) { client in
            try await client.request(.tree, argument: operand, as: TreeView.self)
        }
    }
}
