import NodescopeCollector
import NodescopeControl
import NodescopeReplay

/// A recording at an instant: its replay's collector, answering with the daemon's own queries.
/// The process of a question may be left out (the recording holds one); named, it must be the
/// recorded one, by pid or name, as a collector would match it.
package struct RecordedInstant: TreeSource {
    /// The recording replayed to the instant.
    package let replay: RecordingReplay

    package init(_ replay: RecordingReplay) {
        self.replay = replay
    }

    /// The question's process as the replayed collector resolves it.
    private func argument(_ process: String?) -> String {
        if let process, !process.isEmpty { return process }
        return replay.collector.summary(replay.session).map { String($0.pid) } ?? ""
    }

    private static func answer<T>(_ result: Result<T, QueryRefusal>) throws -> T {
        switch result {
        case .success(let value): return value
        case .failure(let refusal): throw ControlClient.Refusal(refusal)
        }
    }

    package func processes() async throws -> [ProcessSummary] {
        replay.collector.processes()
    }

    package func tree(of process: String?, rootPath: String, depth: Int?) async throws -> TreeView {
        guard replay.collector.summary(replay.session) != nil else {
            throw ControlClient.Refusal(.notFound("the recording holds no process at that instant"))
        }
        var view = try Self.answer(replay.collector.treeAnswer(process: argument(process), rootPath: rootPath, depth: depth))
        view.wallNanos = replay.wallNanos(of: view.session)
        return view
    }

    package func leaks(of process: String?) async throws -> [LeakRecord] {
        try Self.answer(replay.collector.leaksAnswer(process: process ?? ""))
    }

    /// A recording's instant is fixed: nothing settles there, so nothing is waited for (its nodes
    /// awaiting release show in its counts).
    package func awaitingRelease(of process: String?, settlingWithin seconds: Double) async throws -> Int { 0 }
}
