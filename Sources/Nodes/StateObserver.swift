/// Something that takes states of one type: a view taking view state, a presenter, a test probe.
@preconcurrency @MainActor
public protocol StateObserver: AnyObject {
    /// The state it takes.
    associatedtype StateObserverStateType
    /// Receives a new state.
    func update(with: StateObserverStateType)
}

extension StateObserver {
    /// Calls ``update(with:)`` with the current value of `state` and with every later value,
    /// until the returned token is cancelled or deallocated. (With Combine, `NodesCombine`'s
    /// `observe(_:)` takes a publisher.)
    public func observe(_ state: ObservableState<StateObserverStateType>) -> CancellationToken {
        state.observe { [weak self] value in self?.update(with: value) }
    }
}

/// A pure conversion from one state to another, typically from a context's state to view state.
public protocol Transform {
    /// The state it reads.
    associatedtype Input
    /// What it produces.
    associatedtype Output
    /// Converts `value`.
    func callAsFunction(_ value: Input) -> Output
}

/// A transform made from a closure.
public struct ClosureTransform<Input, Output>: Transform {
    private let body: (Input) -> Output

    /// Wraps `body`.
    public init(_ body: @escaping (Input) -> Output) {
        self.body = body
    }

    /// Converts `value` with the closure.
    public func callAsFunction(_ value: Input) -> Output { body(value) }
}

/// A view that displays a view state: the receiving end of `ObservableState.observe(transform:observer:)`.
public protocol WithViewState: StateObserver {
    /// The state the view displays.
    associatedtype ViewState where ViewState == StateObserverStateType
    /// What the view currently shows.
    var viewState: ViewState? { get }
}
