/// A worker that counts its starts and stops.
public final class WorkerMock: Worker {
    /// Whether it is started.
    public private(set) var isWorking = false
    /// How many times it started.
    public private(set) var startCallCount = 0
    /// How many times it stopped.
    public private(set) var stopCallCount = 0

    /// A stopped worker.
    public init() {}

    /// Starts.
    public func start() {
        isWorking = true
        startCallCount += 1
    }

    /// Stops.
    public func stop() {
        isWorking = false
        stopCallCount += 1
    }
}

/// A context that counts its activations.
public final class ContextMock: Context {
    /// Whether it is active.
    public private(set) var isActive = false
    /// How many times it was activated.
    public private(set) var activateCallCount = 0
    /// How many times it was deactivated.
    public private(set) var deactivateCallCount = 0

    /// An inactive context.
    public init() {}

    /// Activates.
    public func activate() {
        isActive = true
        activateCallCount += 1
    }

    /// Deactivates.
    public func deactivate() {
        isActive = false
        deactivateCallCount += 1
    }
}

/// A flow that counts its starts and ends, for testing a parent flow's routing.
public final class FlowMock: ViewControllableFlow {
    #if DEBUG
    /// A tree of one node named after the view's title.
    public var tree: Node { Node(name: view.title, children: []) }
    #endif
    /// Whether it is started: its context is active.
    public var isStarted: Bool { _context.isActive }
    /// Its context, activated on start and deactivated on end.
    public let _context: Context = ContextMock()
    /// How many times it started.
    public private(set) var startCallCount = 0
    /// How many times it ended.
    public private(set) var endCallCount = 0
    /// The view it returns.
    public let view: HeadlessViewController

    /// A flow with a headless view of the given title.
    public init(title: String = "FlowMock") {
        view = HeadlessViewController(title: title)
    }

    /// Starts: activates its context.
    public func start() {
        _context.activate()
        startCallCount += 1
    }

    /// Ends: deactivates its context.
    public func end() {
        _context.deactivate()
        endCallCount += 1
    }

    /// The headless view.
    public func getViewController() -> ViewControllable { view }
}
