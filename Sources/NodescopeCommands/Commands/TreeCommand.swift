import ArgumentParser
import NodescopeCollector
import NodescopeControlCodec
import NodescopeSource

/// `nodescope tree PID|NAME`: the tree once.
struct TreeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree", abstract: "Print a process's node tree once, with a mark for each node's state.")

    @Argument(help: "The process: a pid or a process name (not with --from).")
    var process: String?

    @Option(help: "Show only the subtree at this path of node names, e.g. AppFlow/LoggedInFlow.")
    var root: String?

    @Option(parsing: .unconditional, help: "Show at most this many levels below the root.")
    var depth: Int?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var source: SourceOptions

    func validate() throws {
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        try source.check(process: process, needsProcess: true)
    }

    func run() async throws {
        let (process, root, depth, json) = (self.process, self.root ?? "", self.depth, self.json)
        try await source.withSource(for: process, command: "tree") { source in
            let output = try OutputWriter(path: "-")
            if json {
                // The document (``TreeJSON``) passed on part by part as it arrives: a
                // collector's is never held whole.
                try await source.treeBody(of: process, rootPath: root, depth: depth) { output.write(bytes: $0) }
                output.write("\n")
            } else {
                TreeText.write(try await source.tree(of: process, rootPath: root, depth: depth)) { output.write($0) }
            }
            try output.finish()
        }
    }
}
