import Nodes
import OpenCombine

extension StateObserver {
    /// Calls `update(with:)` with every state `publisher` emits, until the returned cancellable
    /// is cancelled or deallocated. The observer is held weakly.
    public func observe<P: Publisher>(
        _ publisher: P
    ) -> AnyCancellable where P.Output == StateObserverStateType, P.Failure == Never {
        publisher.sink { [weak self] state in self?.update(with: state) }
    }
}
