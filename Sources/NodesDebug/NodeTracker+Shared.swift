import NodesAgent

extension NodeTracker {
    /// The process-wide tracker that the runtime reports to and the agent reads.
    ///
    /// It is created at the first node event of the process, which is when the agent reads the
    /// environment (`NODESCOPE_SOCKET`, `NODESCOPE`) and, if asked, starts.
    public static let shared: NodeTracker = {
        let tracker = NodeTracker(logCapacity: sharedLogCapacity, livesForever: true)
        NodesAgent.NodescopeAgent.startFromEnvironment(tracker: tracker)
        return tracker
    }()

    /// The tracker that newly created nodes report to: ``shared`` unless a task binds another,
    /// which tests do to observe their own nodes only.
    @TaskLocal public static var current: NodeTracker = .shared
}

extension NodesAgent.NodescopeAgent {
    /// Starts the agent for the shared tracker (once per process). `socketPath` overrides the
    /// environment's choice. Returns nil when `NODESCOPE=off` or an agent already runs.
    @discardableResult
    public static func start(socketPath: String? = nil) -> NodescopeAgent? {
        start(socketPath: socketPath, tracker: .shared)
    }
}
