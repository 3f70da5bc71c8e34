import ArgumentParser
import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeReports
import NodescopeSource

/// `nodescope why PID|NAME PATH`: asks the host, now, what holds a detached node.
struct WhyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "why",
        abstract: "Ask a process what holds a detached node now, before its grace runs out or after.",
        discussion: """
            The host analyses its own memory (on its agent's thread, bounded in time) and names, \
            for each alive object of the detached nodes at PATH, the retain cycle or the path of \
            references that holds it. A leak is explained on its own when its grace runs out; \
            this asks at any moment, for instance while a screen you closed is still in memory.
            """)

    @Argument(help: "The process: a pid or a process name.")
    var process: String

    @Argument(help: "The path of node names of the detached node, e.g. AppFlow/LoggedInFlow/ProfileFlow.")
    var path: String

    @Flag(help: "Print JSON (the nodes with their retainer paths) instead of text.")
    var json = false

    @OptionGroup var connection: ConnectionOptions
    @OptionGroup var waiting: WaitOptions

    func validate() throws {
        if process.isEmpty { throw ValidationError("the process is empty: give a pid or a process name") }
        if path.split(separator: "/").isEmpty {
            throw ValidationError("the path is empty: give the node names from the root, separated by /")
        }
    }

    func run() async throws {
        let access = CollectorAccess(socketPath: connection.socketPath, waitSeconds: waiting.wait, settings: .init())
        let (process, path) = (self.process, self.path)
        var explanation = try await access.run(waitingFor: process) { client in
            try await client.request(
                .explain, argument: process, rootPath: path, as: ControlBody.Explanation.self,
                answerWithinSeconds: Self.answerSeconds)
        }
        explanation.nodes = await ClosureNaming.shared.named(explanation.nodes)
        if json {
            Terminal.write(Terminal.prettyJSON(explanation))
            return
        }
        switch explanation.outcome {
        case "unavailable":
            throw CLIError("\(VisibleText.escaped(process)) cannot analyse its memory on this system", exitCode: 1)
        case "nothingAlive":
            Terminal.write("every object of \(VisibleText.escaped(path)) was released meanwhile: nothing holds it any more\n")
        default:
            Terminal.write(ExplanationText.render(explanation.nodes, paths: explanation.paths, colorful: Terminal.isColorful))
        }
    }

    /// How long the answer may take: the collector's own deadline for the host, and a little.
    static let answerSeconds = 35.0
}
