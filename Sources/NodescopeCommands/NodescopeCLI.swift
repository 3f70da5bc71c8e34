import ArgumentParser

/// The `nodescope` command: see inside a running node-tree app.
package struct NodescopeCLI: AsyncParsableCommand {
    /// The command's help and subcommands.
    package static let configuration = CommandConfiguration(
        commandName: "nodescope",
        abstract: "See the live node tree of a running Swift app, catch leaked nodes, draw the tree.",
        discussion: """
            Hosts (apps built on the Nodes runtime or reporting through NodesDebug) connect to a \
            collector on a Unix socket. Run `nodescope daemon` to keep one running, or let tree, \
            attach and leaks start an embedded one that waits for the host.
            """,
        subcommands: [
            DaemonCommand.self, PsCommand.self, TreeCommand.self, AttachCommand.self, ExportCommand.self,
            LeaksCommand.self, WhyCommand.self, UICommand.self, CheckCommand.self, DemoCommand.self,
            RecordCommand.self, TimelineCommand.self, DiffCommand.self, CheckGuardCommand.self,
        ]
    )

    /// Creates the command (ArgumentParser does this).
    package init() {}
}
