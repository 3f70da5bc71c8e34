import ArgumentParser
import NodescopeCollector
import NodescopeControl

/// `nodescope tree PID|NAME`: the tree once.
struct TreeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tree", abstract: "Print a process's node tree once, with a mark for each node's state.")

    @Argument(help: "The process: a pid or a process name.")
    var process: String

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
        if process.isEmpty { throw ValidationError("the process is empty: give a pid or a process name") }
    }

    func run() async throws {
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
