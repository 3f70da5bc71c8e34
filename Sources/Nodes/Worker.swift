/// Business logic that runs while its node's context is active.
public protocol Worker: AnyObject {
    /// Whether the worker is started.
    var isWorking: Bool { get }
    /// Starts the worker; the context does this when it becomes active.
    func start()
    /// Stops the worker; the context does this when it resigns active.
    func stop()
}

/// The base class of workers: start and stop bookkeeping, hooks, and cancellables that are
/// cancelled when the worker stops.
open class AbstractWorker<CancellableType: Cancellable & Hashable>: TrackedObjectBase, Worker {
    /// Subscriptions that live while the worker works.
    public final var cancellables = Set<CancellableType>()
    /// Whether the worker is started.
    public final private(set) var isWorking = false
    /// Creates a stopped worker.
    public override init() {}

    /// Starts the worker and calls ``didStart()``.
    public final func start() {
        guard !isWorking else { return }
        isWorking = true
        didStart()
    }

    /// Calls ``willStop()``, cancels the cancellables and stops the worker.
    public final func stop() {
        guard isWorking else { return }
        willStop()
        for cancellable in cancellables { cancellable.cancel() }
        cancellables.removeAll()
        isWorking = false
    }

    /// Called after the worker starts. Subclasses override it.
    open func didStart() {}

    /// Called before the worker stops. Subclasses override it.
    open func willStop() {}
}

/// Starts a node's workers in order and stops them in reverse order.
struct WorkerController {
    let workers: [Worker]

    func startWorkers() {
        for worker in workers { worker.start() }
    }

    func stopWorkers() {
        for worker in workers.reversed() { worker.stop() }
    }

    func first<T>(ofType type: T.Type) -> T? {
        workers.lazy.compactMap { $0 as? T }.first
    }
}
