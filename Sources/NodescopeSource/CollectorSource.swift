import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec

/// A collector now: each question is a control connection to the collector on `socketPath`
/// (after the socket checks of ``ControlClient``), answered by its handlers.
package struct CollectorSource: TreeSource {
    /// The collector's socket.
    package let socketPath: String

    package init(socketPath: String) {
        self.socketPath = socketPath
    }

    /// A collector knows many processes: a question about one names it.
    private func named(_ process: String?) throws -> String {
        guard let process, !process.isEmpty else {
            throw ControlClient.Refusal(.badRequest("name a process: a pid or a process name"))
        }
        return process
    }

    /// On the wire a depth counts the root's level (1 = the root only, 0 = all).
    private static func wireDepth(_ depth: Int?) -> UInt32 {
        guard let depth else { return 0 }
        return depth >= Int(UInt32.max) - 1 ? 0 : UInt32(max(depth, 0)) + 1
    }

    package func processes() async throws -> [ProcessSummary] {
        try await ControlClient.connect(to: socketPath) { try await $0.request(.listProcesses, as: [ProcessSummary].self) }
    }

    package func tree(of process: String?, rootPath: String, depth: Int?) async throws -> TreeView {
        let process = try named(process)
        return try await ControlClient.connect(to: socketPath) { client in
            try await client.request(.tree, argument: process, depth: Self.wireDepth(depth), rootPath: rootPath, as: TreeView.self)
        }
    }

    package func leaks(of process: String?) async throws -> [LeakRecord] {
        try await ControlClient.connect(to: socketPath) { try await $0.request(.leaks, argument: process ?? "", as: [LeakRecord].self) }
    }

    /// Polls the processes every 50 ms until none of the nodes asked about awaits release, for
    /// at most `seconds` and one grace and a second (a host vouches for its time every 50 ms
    /// while a grace runs).
    package func awaitingRelease(of process: String?, settlingWithin seconds: Double) async throws -> Int {
        var session: SessionID?
        if let process { session = try await self.session(of: process) }
        let clock = ContinuousClock()
        var deadline: ContinuousClock.Instant?
        while true {
            let summaries = try await processes().filter { session == nil ? $0.isConnected : $0.session == session }
            let awaiting = summaries.reduce(0) { $0 + $1.awaitingRelease }
            guard awaiting > 0 else { return 0 }
            let grace = Double(summaries.map(\.graceNanos).max() ?? 0) / 1e9
            let end = deadline ?? clock.now.advanced(by: .seconds(min(max(seconds, 0), grace + 1)))
            deadline = end
            guard clock.now < end else { return awaiting }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    package func treeBody(
        of process: String?, rootPath: String, depth: Int?, eachPart: ([UInt8]) throws -> Void
    ) async throws {
        let process = try named(process)
        try await ControlClient.connect(to: socketPath) { client in
            try await client.requestBody(.tree, argument: process, depth: Self.wireDepth(depth), rootPath: rootPath, eachPart: eachPart)
        }
    }

    package func processesBody() async throws -> [UInt8] {
        try await ControlClient.connect(to: socketPath) { try await $0.requestBody(.listProcesses) }
    }

    package func leaksBody(of process: String?) async throws -> [UInt8] {
        try await ControlClient.connect(to: socketPath) { try await $0.requestBody(.leaks, argument: process ?? "") }
    }
}
