import ArgumentParser
import NodescopeCollector
import NodescopeControl

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
            Terminal.write(json ? Terminal.prettyJSON(view) : TreeText.render(view))
            return
        }
        guard let process else { throw CLIError("name a process or give --from") }
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        // The request counts levels from 1, and 0 means all of them.
        let depthLimit = depth.map { $0 >= Int(UInt32.max) ? 0 : UInt32($0) + 1 } ?? 0
        let view = try await access.run(waitingFor: process) { client in
            try await client.request(.tree, argument: process, depth: depthLimit, rootPath: root ?? "", as: TreeView.self)
        }
        if json {
            Terminal.write(Terminal.prettyJSON(view))
        } else {
            Terminal.write(TreeText.render(view))
        }
    }
}
