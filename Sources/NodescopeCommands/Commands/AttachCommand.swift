import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl

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
            try await client.subscribe(process) { view in
                Terminal.write(TreeText.render(view))
                mirror = TreeMirror(view)
            } onChange: { change in
                if let line = mirror?.apply(change, at: Date()) { Terminal.write(line + "\n") }
                if case .sessionEnded = change { return false }
                return true
            }
        }
    }
}
