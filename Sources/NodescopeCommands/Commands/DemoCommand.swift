import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeReports
import NodescopeServer
import NodescopeSource
import Subprocess
import Synchronization
import SystemPackage

/// `nodescope demo`: the quick start. Runs sample-nodes with a leak against an embedded
/// collector, shows the tree live, then the leak report, and writes an SVG.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Run a sample app with a leak against an embedded collector: live tree, leak report, SVG.")

    @Option(name: .shortAndLong, help: "Where to write the diagram.")
    var output: String = "nodescope-demo.svg"

    /// The leaks sample-nodes can inject (`sample-nodes --help` describes each), or none.
    enum Leak: String, ExpressibleByArgument, CaseIterable {
        case retainCycle = "retain-cycle"
        case worker, subscription, view, none
    }

    @Option(help: "The leak the sample injects.")
    var leak: Leak = .retainCycle

    func validate() throws {
        if let problem = OutputFile.problem(with: output) { throw ValidationError("--output \(output): \(problem)") }
    }

    func run() async throws {
        let sample = try Self.locateSample()
        let directory = try PrivateDirectory.make(prefix: "nodescope-demo")
        defer { directory.remove() }
        let socket = directory.path + "/collector.sock"
        let server = CollectorServer(
            socketPath: socket, settings: CollectorSettings(graceNanos: 1_000_000_000, holdExit: true), logger: .quiet)
        try await server.start()

        let header = Terminal.paint("nodescope demo", .bold)
        Terminal.write("\(header): an embedded collector on \(socket)\n")
        let leakArguments = leak == .none ? [] : ["--leak", leak.rawValue]
        Terminal.write(
            "\(header): running sample-nodes\(leak == .none ? "" : " --leak \(leak.rawValue)"): "
                + "launch, log in, browse, log out; \(leak == .none ? "nothing leaks" : "one node leaks")\n\n")
        let finished: ExecutionResult<(TreeView, [LeakRecord]), DiscardedOutput, SequenceOutput>
        do {
            // The sample's own leak log (the runtime's LeakDetector) would interleave with ours:
            // its standard error is kept, and shown only if it ends before connecting.
            finished = try await Subprocess.run(
                .path(FilePath(sample)), arguments: Arguments(leakArguments + ["--pace", "150", "--hold", "1.5", "--quiet"]),
                environment: .inherit.updating(["NODESCOPE_SOCKET": socket]), input: .none, output: .discarded, error: .sequence
            ) { execution in
                let errors = SampleErrors()
                async let drained: Void = errors.drain(execution.standardError)
                do {
                    let result = try await watch(pid: "\(execution.processIdentifier.value)", socket: socket, errors: errors)
                    try await drained
                    return result
                } catch {
                    try? execution.send(signal: .terminate)
                    try? await drained
                    throw error
                }
            }
        } catch {
            await server.stop()
            if let error = error as? SubprocessError { throw CLIError("cannot run \(sample): \(error)", underlying: error) }
            throw error
        }
        await server.stop()
        let (view, unnamedLeaks) = finished.closureResult
        let leaks = await ClosureNaming.shared.named(unnamedLeaks)
        Terminal.write(Terminal.paint("\n── the tree when the sample exited ──\n", .gray))
        Terminal.write(TreeText.render(view))
        Terminal.write(Terminal.paint("\n── leak report ──\n", .gray))
        let report = LeakReport(leaks: leaks, processes: [], graceNanos: 1_000_000_000)
        Terminal.write(ReportText.render(.collector(report, commandLine: ["nodescope", "demo"]), colorful: Terminal.isColorful))
        guard !view.nodes.isEmpty else {
            Terminal.write("\n\(header): every node was released, so there is no tree left to draw\n")
            return
        }
        let svg = try TreeDiagram.draw(view, leaks: leaks, format: .svg).text
        try OutputFile.write(svg, to: output)
        Terminal.write(
            "\n\(header): wrote \(output): the tree as a diagram" + (leaks.isEmpty ? "\n" : ", the leak in red\n"))
    }

    /// Shows the sample's tree live until it ends, and returns its last tree and its leaks.
    private func watch(pid: String, socket: String, errors: SampleErrors) async throws -> (TreeView, [LeakRecord]) {
        let access = CollectorAccess(socketPath: socket, waitSeconds: 20, settings: .init())
        let giveUp: () -> String? = {
            errors.hasEnded ? "sample-nodes exited before connecting:\n\(errors.text)" : nil
        }
        return try await access.run(waitingFor: pid, giveUp: giveUp) { client in
            var mirror: TreeMirror?
            let naming = ClosureNaming.shared
            try await client.subscribe(pid) { view in
                let view = await naming.named(view)
                mirror = TreeMirror(view)
                Terminal.write(Terminal.paint("── the tree as the sample starts ──\n", .gray))
                Terminal.write(TreeText.render(view))
                Terminal.write(Terminal.paint("\n── live: nodes as they attach, detach and leak ──\n", .gray))
            } onChange: { change in
                let change = await naming.named(change)
                switch change {
                case .objectAdded, .objectReleased, .statusChanged(_, .started), .statusChanged(_, .active),
                    .statusChanged(_, .inactive), .statusChanged(_, .ended), .statusChanged(_, .attached):
                    _ = mirror?.apply(change, at: Date())
                default:
                    if let line = mirror?.apply(change, at: Date()) { Terminal.write(line + "\n") }
                }
                if case .sessionEnded = change { return false }
                return true
            }
            return try await (
                client.request(.tree, argument: pid, as: TreeView.self),
                client.request(.leaks, argument: pid, as: [LeakRecord].self)
            )
        }
    }

    /// sample-nodes is built next to this executable by `swift build`.
    static func locateSample() throws -> String {
        let executable =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        let candidate = (executable as NSString).deletingLastPathComponent + "/sample-nodes"
        guard FileManager.default.isExecutableFile(atPath: candidate) else {
            throw CLIError("sample-nodes is not built next to nodescope (\(candidate)); run `swift build` first")
        }
        return candidate
    }
}

/// The sample's standard error, read while it runs: shown if it ends before connecting. Its
/// end (the pipe closing) is how the demo learns that the sample has exited.
private final class SampleErrors: Sendable {
    private let state = Mutex<(bytes: [UInt8], ended: Bool)>(([], false))

    /// Reads `stream` to its end.
    func drain(_ stream: SubprocessOutputSequence) async throws {
        defer { state.withLock { $0.ended = true } }
        for try await buffer in stream {
            buffer.withUnsafeBytes { bytes in state.withLock { $0.bytes.append(contentsOf: bytes.prefix(65_536)) } }
        }
    }

    /// Whether the sample's standard error has closed (it exited).
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// What the sample wrote.
    var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }
}

/// A private (0700) temporary directory for a collector's socket.
struct PrivateDirectory {
    let path: String

    static func make(prefix: String) throws -> PrivateDirectory {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else {
            throw CLIError("cannot create a private directory in /tmp for the collector's socket")
        }
        let path = String(cString: made)
        Terminal.scratchDirectories.withLock { _ = $0.insert(path) }
        return PrivateDirectory(path: path)
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: path)
        Terminal.scratchDirectories.withLock { _ = $0.remove(path) }
    }
}
