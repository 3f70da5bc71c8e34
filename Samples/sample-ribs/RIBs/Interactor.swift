/// The business logic of a RIB. It is active while its RIB is attached; what it subscribes to
/// while active is disposed when it resigns (see ``Disposable/disposeOnDeactivate(interactor:)``).
class Interactor {
    private(set) var isActive = false
    fileprivate var activeBag = DisposeBag()

    /// Activates the interactor: its router does it when the RIB is attached.
    final func activate() {
        guard !isActive else { return }
        isActive = true
        didBecomeActive()
    }

    /// Deactivates the interactor and disposes its subscriptions: its router does it on detach.
    final func deactivate() {
        guard isActive else { return }
        willResignActive()
        activeBag.dispose()
        activeBag = DisposeBag()
        isActive = false
    }

    /// Called when the interactor becomes active: subscribe to streams here.
    func didBecomeActive() {}

    /// Called when the interactor is about to resign.
    func willResignActive() {}
}

extension Disposable {
    /// Disposes this subscription when `interactor` deactivates: how a RIB confines its
    /// subscriptions to its lifecycle.
    func disposeOnDeactivate(interactor: Interactor) {
        interactor.activeBag.insert(self)
    }
}
