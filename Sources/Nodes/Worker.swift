/// Business logic that runs while its node's context is active.
public protocol Worker: AnyObject {
    /// Whether the worker is started.
    var isWorking: Bool { get }
    /// Starts the worker; the context does this when it becomes active.
    func start()
    /// Stops the worker; the context does this when it resigns active.
    func stop()
}

/// The base class of workers, without cancellables: start and stop bookkeeping and hooks.
/// Subclass ``AbstractWorker`` rather than this class.
open class _BaseWorker: TrackedObjectBase, Worker {
    /// Whether the worker is started.
    public private(set) var isWorking = false

    /// Creates a stopped worker.
    public override init() {}

    /// A worker released while it works was never stopped: in a debug build that stops the
    /// program, as the Nodes framework does.
    deinit {
        #if DEBUG
        if isWorking {
            assertionFailure("Lifecycle violation: \(type(of: self)) was released while working; stop it first")
        }
        #endif
    }

    /// Called after the worker starts. Subclasses override it.
    open func didStart() {}

    /// Called before the worker stops. Subclasses override it.
    open func willStop() {}

    /// Called on stop after ``willStop()``: ``AbstractWorker`` cancels its cancellables here.
    open func _reset() {}

    /// Starts the worker and calls ``didStart()``.
    public final func start() {
        guard !isWorking else { return }
        isWorking = true
        didStart()
    }

    /// Calls ``willStop()`` and ``_reset()``, then stops the worker.
    public final func stop() {
        guard isWorking else { return }
        willStop()
        _reset()
        isWorking = false
    }
}

/// The base class of workers: start and stop bookkeeping, hooks, and cancellables that are
/// cancelled when the worker stops (each then watched by ``LeakDetector/detect(_:delay:)``).
open class AbstractWorker<CancellableType: Cancellable>: _BaseWorker {
    /// Subscriptions that live while the worker works.
    public var cancellables = Set<CancellableType>()

    /// Cancels and forgets the cancellables.
    public final override func _reset() {
        cancellables.cancelAndWatchAll()
    }
}

/// Starts a context's workers and stops them, both in order. ``_BaseContext`` owns one.
public final class WorkerController {
    /// The workers, in order.
    public private(set) var workers: [Worker]

    /// A controller of `workers`.
    public init(workers: [Worker]) {
        self.workers = workers
    }

    /// Starts every worker, in order.
    public func startWorkers() {
        for worker in workers { worker.start() }
    }

    /// Stops every worker, in order.
    public func stopWorkers() {
        for worker in workers { worker.stop() }
    }

    /// The first worker of type `T`.
    public func firstWorker<T>(ofType type: T.Type) -> T? {
        for worker in workers { if let typed = worker as? T { return typed } }
        return nil
    }

    /// Calls `perform` with the first worker of type `T`, if there is one.
    public func withFirstWorker<T>(ofType type: T.Type, perform: (_ worker: T) throws -> Void) rethrows {
        if let worker = firstWorker(ofType: type) { try perform(worker) }
    }

    /// Every worker of type `T`, in order.
    public func workers<T>(ofType type: T.Type) -> [T] {
        workers.compactMap { $0 as? T }
    }

    /// Calls `perform` with every worker of type `T`, in order.
    public func withWorkers<T>(ofType type: T.Type, perform: (_ worker: T) throws -> Void) rethrows {
        for worker in workers(ofType: type) { try perform(worker) }
    }
}
