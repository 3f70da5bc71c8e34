/// A node's interactor: it handles events and user interactions, and is active while its node
/// is attached.
public protocol Context: AnyObject {
    /// Whether the context is active.
    var isActive: Bool { get }
    /// Activates the context and starts its workers.
    func activate()
    /// Stops its workers and deactivates the context.
    func deactivate()
}

/// Gives the runtime the workers of a context, for tracking.
protocol WorkerOwning {
    var workers: [Worker] { get }
}

/// The base class of contexts: activation, workers started and stopped with it, hooks, and
/// cancellables cancelled on deactivation.
///
/// Activation: `isActive` becomes true, ``didBecomeActive()``, then the workers start in order.
/// Deactivation is the reverse: the workers stop in reverse order, ``willResignActive()``, the
/// cancellables are cancelled, then `isActive` becomes false.
open class AbstractContext<CancellableType: Cancellable & Hashable>: TrackedObjectBase, Context, WorkerOwning {
    /// Subscriptions that live while the context is active.
    public final var cancellables = Set<CancellableType>()
    /// The node's workers.
    public final let workers: [Worker]
    /// Whether the context is active.
    public final private(set) var isActive = false

    private let workerController: WorkerController

    /// Creates an inactive context with its workers.
    public init(workers: [Worker]) {
        self.workers = workers
        self.workerController = WorkerController(workers: workers)
    }

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
        for cancellable in cancellables { cancellable.cancel() }
        cancellables.removeAll()
        isActive = false
        trackingHandle?.reportState(.inactive)
    }

    /// The first worker of the given type.
    public final func firstWorker<T>(ofType type: T.Type) -> T? {
        workerController.first(ofType: type)
    }

    /// Called when the context has become active, before the workers start. Subclasses override it.
    open func didBecomeActive() {}

    /// Called when the context is about to resign active, after the workers stopped. Subclasses
    /// override it.
    open func willResignActive() {}
}

/// A context that drives a presenter (usually the node's view, through a protocol).
open class AbstractPresentableContext<CancellableType: Cancellable & Hashable, PresentableType>:
    AbstractContext<CancellableType>
{
    /// What the context presents to.
    public final let presentable: PresentableType

    /// Creates an inactive context with its presentable and workers.
    public init(presentable: PresentableType, workers: [Worker]) {
        self.presentable = presentable
        super.init(workers: workers)
    }
}
