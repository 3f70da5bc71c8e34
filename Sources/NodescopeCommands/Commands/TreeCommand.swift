import ArgumentParser
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec

/// `nodescope tree PID|NAME`: the tree once.
struct TreeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree", abstract: "Print a process's node tree once, with a mark for each node's state.")

    @Argument(help: "The process: a pid or a process name (not with --from).")
    var process: String?

    @Option(help: "Read the tree from this recording (see `nodescope record`) at --at, instead of a collector.")
    var from: String?

    @OptionGroup var replay: ReplayOptions

    @Option(help: "Show only the subtree at this path of node names, e.g. AppFlow/LoggedInFlow.")
    var root: String?

    @Option(parsing: .unconditional, help: "Show at most this many levels below the root.")
    var depth: Int?

    @Flag(help: "Print JSON instead of text.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if let depth, depth < 0 { throw ValidationError("--depth must be 0 or more") }
        if process?.isEmpty == true { throw ValidationError("the process is empty: give a pid or a process name") }
        if process == nil, from == nil { throw ValidationError("name a process (pid or name), or give --from RECORDING") }
        if process != nil, from != nil { throw ValidationError("give either a process or --from, not both") }
        if replay.at != nil, from == nil { throw ValidationError("--at reads a recording: give --from RECORDING") }
        _ = try replay.instant()
    }

    func run() async throws {
        if let from {
            let replayed = try RecordingInput.replay(from, at: try replay.instant())
            let path = root.map { $0.split(separator: "/").map(String.init) }
            guard let view = replayed.collector.tree(replayed.session, rootPath: path, depth: depth), path == nil || !view.nodes.isEmpty
            else {
                throw CLIError("no node at \(root ?? "") in the recording at that instant", exitCode: 1)
            }
            try Self.print(view, json: json)
            return
        }
        guard let process else { throw CLIError("name a process or give --from") }
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        // The request counts levels from 1, and 0 means all of them.
        let depthLimit = depth.map { $0 >= Int(UInt32.max) ? 0 : UInt32($0) + 1 } ?? 0
        if json {
            // The collector's JSON is the document (``TreeJSON``): passed on part by part as it
            // arrives, never held whole.
            let output = try OutputWriter(path: "-")
            try await access.run(waitingFor: process) { client in
                try await client.requestBody(.tree, argument: process, depth: depthLimit, rootPath: root ?? "") { part in
                    output.write(bytes: part)
                }
            }
            output.write("\n")
            try output.finish()
            return
        }
        let body = try await access.run(waitingFor: process) { client in
            try await client.requestBody(.tree, argument: process, depth: depthLimit, rootPath: root ?? "")
        }
        let view: TreeView
        do {
            view = try ControlBody.decode(TreeView.self, from: body)
        } catch {
            throw CLIError("the collector's tree could not be read: \(error)")
        }
        try Self.print(view, json: false)
    }

    /// Writes `view` to standard output as it is drawn (text) or written (JSON): a tree of any
    /// size or depth streams out in linear time.
    static func print(_ view: TreeView, json: Bool) throws(CLIError) {
        let output = try OutputWriter(path: "-")
        if json {
            TreeJSON.write(view) { output.write(bytes: $0) }
            output.write("\n")
        } else {
            TreeText.write(view) { output.write($0) }
        }
        try output.finish()
    }
}
