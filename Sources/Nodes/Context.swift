/// A node's interactor: it handles events and user interactions, and is active while its node
/// is attached.
@preconcurrency @MainActor
public protocol Context: AnyObject {
    /// Whether the context is active.
    var isActive: Bool { get }
    /// Activates the context and starts its workers.
    func activate()
    /// Stops its workers and deactivates the context.
    func deactivate()
}

/// Gives the runtime the workers of a context, for tracking.
@MainActor
protocol WorkerOwning {
    var workers: [Worker] { get }
}

/// The base class of contexts, without cancellables: activation, and workers started and
/// stopped with it. Subclass ``AbstractContext`` rather than this class.
///
/// Activation: `isActive` becomes true, ``didBecomeActive()``, then the workers start in order.
/// Deactivation: the workers stop in order, ``willResignActive()``, ``_reset()``, then
/// `isActive` becomes false.
@preconcurrency @MainActor
open class _BaseContext: TrackedObjectBase, Context, WorkerOwning {
    /// Whether the context is active.
    public private(set) var isActive = false
    /// The node's workers, in order.
    // Stored here as well as in the controller, so that a retainer path to a worker reads
    // `Context .workers[0]`.
    public let workers: [Worker]

    private let workerController: WorkerController

    /// Creates an inactive context with its workers.
    public init(workers: [Worker]) {
        self.workers = workers
        self.workerController = WorkerController(workers: workers)
    }

    /// A context released while it is active was never deactivated: in a debug build that stops
    /// the program, as the Nodes framework does.
    deinit {
        #if DEBUG
        if isActive {
            assertionFailure("Lifecycle violation: \(type(of: self)) was released while active; deactivate it first")
        }
        #endif
    }

    /// Called when the context has become active, before the workers start. Subclasses override it.
    open func didBecomeActive() {}

    /// Called when the context is about to resign active, after the workers stopped. Subclasses
    /// override it.
    open func willResignActive() {}

    /// Called on deactivation after ``willResignActive()``: ``AbstractContext`` cancels its
    /// cancellables here.
    open func _reset() {}

    /// Activates the context: see the class overview for the order.
    public final func activate() {
        guard !isActive else { return }
        isActive = true
        trackingHandle?.reportState(.active)
        didBecomeActive()
        workerController.startWorkers()
    }

    /// Deactivates the context: see the class overview for the order.
    public final func deactivate() {
        guard isActive else { return }
        workerController.stopWorkers()
        willResignActive()
        _reset()
        isActive = false
        trackingHandle?.reportState(.inactive)
    }

    /// The first worker of type `T`.
    public final func firstWorker<T>(ofType type: T.Type) -> T? {
        workerController.firstWorker(ofType: type)
    }

    /// Calls `perform` with the first worker of type `T`, if there is one.
    public final func withFirstWorker<T>(ofType type: T.Type, perform: (_ worker: T) throws -> Void) rethrows {
        try workerController.withFirstWorker(ofType: type, perform: perform)
    }

    /// Every worker of type `T`, in order.
    public final func workers<T>(ofType type: T.Type) -> [T] {
        workerController.workers(ofType: type)
    }

    /// Calls `perform` with every worker of type `T`, in order.
    public final func withWorkers<T>(ofType type: T.Type, perform: (_ worker: T) throws -> Void) rethrows {
        try workerController.withWorkers(ofType: type, perform: perform)
    }
}

/// The base class of contexts: activation, workers started and stopped with it, hooks, and
/// cancellables cancelled on deactivation (each then watched by ``LeakDetector/detect(_:delay:)``).
open class AbstractContext<CancellableType: Cancellable>: _BaseContext {
    /// Subscriptions that live while the context is active.
    public var cancellables = Set<CancellableType>()

    /// Cancels and forgets the cancellables.
    public final override func _reset() {
        cancellables.cancelAndWatchAll()
    }
}

/// A context that drives a presenter (usually the node's view, through a protocol).
open class AbstractPresentableContext<CancellableType: Cancellable, PresentableType>:
    AbstractContext<CancellableType>
{
    /// What the context presents to.
    public let presentable: PresentableType

    /// Creates an inactive context with its presentable and workers.
    public init(presentable: PresentableType, workers: [Worker]) {
        self.presentable = presentable
        super.init(workers: workers)
    }
}
