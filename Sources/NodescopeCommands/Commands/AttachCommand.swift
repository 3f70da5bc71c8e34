import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeReports
import NodescopeSource

/// `nodescope attach PID|NAME`: the tree, then every change live, until the host goes away.
struct AttachCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "attach",
        abstract: "Print a process's tree, then each change as it happens, until the process goes away.",
        discussion: """
            A name that matches only processes that have ended waits (up to --wait) for a live one \
            to connect. Ends with 0 when the process ends, 1 when the collector goes away.
            """)

    @Argument(help: "The process: a pid or a process name.")
    var process: String

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if process.isEmpty { throw ValidationError("the process is empty: give a pid or a process name") }
    }

    func run() async throws {
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        Terminal.endWhenReaderLeaves()
        try await access.run(waitingFor: process, live: true) { client in
            var mirror: TreeMirror?
            var pid: UInt32?
            var ended = false
            // The closures on retainer paths named, as `tree` and `leaks` name them.
            let naming = ClosureNaming.shared
            try await client.subscribe(process) { view in
                let view = await naming.named(view)
                Terminal.write(TreeText.render(view))
                mirror = TreeMirror(view)
                pid = view.pid
            } onChange: { change in
                let change = await naming.named(change)
                if let line = mirror?.apply(change, at: Date()) { Terminal.write(line + "\n") }
                if case .sessionEnded = change {
                    ended = true
                    return false
                }
                return true
            }
            // The process's counts as it ended, as `ps` and `tree` give them.
            if ended, let pid,
                let counts = try? await client.request(.tree, argument: "\(pid)", depth: 1, as: TreeView.self).counts
            {
                Terminal.write("\(Vocabulary.nodeCounts(counts))\n")
            }
        }
    }
}
