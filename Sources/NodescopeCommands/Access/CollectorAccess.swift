import Foundation
import NodescopeCollector
import NodescopeControl
import NodescopeServer
import NodescopeWire

/// How a command reaches a collector: the daemon when one answers on the socket, otherwise an
/// embedded collector that this command starts on the same path and stops when it is done.
struct CollectorAccess {
    let socketPath: String
    let waitSeconds: Double
    let settings: CollectorSettings

    /// Runs `body` with a client of a collector to which `process` (a pid or a name) is
    /// connected, waiting up to `waitSeconds` for it to connect.
    /// - Parameter giveUp: checked while waiting; a message ends the wait with that error (the
    ///   demo uses it when its child process exits before connecting).
    /// - Parameter live: whether only a process still connected will do (`attach`): a name
    ///   that matches only ended processes keeps the command waiting for a new one.
    func run<T: Sendable>(
        waitingFor process: String?, live: Bool = false, giveUp: () -> String? = { nil },
        _ body: (inout ControlClient) async throws -> T
    ) async throws -> T {
        // Not "no daemon runs" when the socket is another user's: say whose it is.
        try ControlClient.checkPlace(of: socketPath)
        if CollectorServer.isAnswering(at: socketPath) {
            return try await ControlClient.connect(to: socketPath) { client in
                if let process { try await waitForProcess(process, live: live, client: &client, giveUp: giveUp) }
                return try await body(&client)
            }
        }
        let server = CollectorServer(socketPath: socketPath, settings: settings, logger: .quiet)
        do {
            try await server.start()
        } catch {
            throw CLIError("no daemon runs on \(socketPath), and an embedded collector could not start there: \(error)")
        }
        Terminal.note(
            "no daemon on \(socketPath); started an embedded collector"
                + (process.map { ", waiting up to \(Self.seconds(waitSeconds)) for \($0) to connect" } ?? ""))
        do {
            let result = try await ControlClient.connect(to: socketPath) { client in
                if let process { try await waitForProcess(process, live: live, client: &client, giveUp: giveUp) }
                return try await body(&client)
            }
            await server.stop()
            return result
        } catch {
            await server.stop()
            throw error
        }
    }

    /// Polls until the collector knows `process` (a live one when `live`), or fails after the
    /// wait with what it found.
    private func waitForProcess(
        _ process: String, live: Bool, client: inout ControlClient, giveUp: () -> String?
    ) async throws {
        let deadline = Date().addingTimeInterval(waitSeconds)
        while true {
            // Why the wait goes on, as the message to give if it runs out.
            let missing: String
            do {
                let view = try await client.request(.tree, argument: process, depth: 1, as: TreeView.self)
                guard live else { return }
                let summaries = try await client.request(.listProcesses, as: [ProcessSummary].self)
                guard let ended = summaries.first(where: { $0.session == view.session && !$0.isConnected }) else { return }
                missing =
                    "\(VisibleText.escaped(process)) matches only a process that has ended (pid \(ended.pid), "
                    + "\(ended.endedNormally == true ? "exited" : "ended abnormally")), and no live one connected "
                    + "within \(Self.seconds(waitSeconds)); `nodescope tree \(ended.pid)` shows its last tree"
            } catch let refusal as ControlClient.Refusal where refusal.status == .notFound {
                missing =
                    "no process \(VisibleText.escaped(process)) connected within \(Self.seconds(waitSeconds)); is it "
                    + "running with NODESCOPE_SOCKET=\(socketPath) (or a debug build)? Raise --wait to wait longer"
            }
            if let reason = giveUp() { throw CLIError(reason) }
            guard Date() < deadline else { throw CLIError(missing, exitCode: 1) }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    static func seconds(_ value: Double) -> String {
        String(format: "%g s", value)
    }
}
