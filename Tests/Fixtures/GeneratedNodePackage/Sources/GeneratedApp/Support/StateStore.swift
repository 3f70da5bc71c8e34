import Nodes
import NodesCombine

// The state stores that the generated Context and Builder use. The Nodes framework ships them
// only with SwiftUI (Apple platforms), so an app with a custom UI framework defines its own, as
// this one does.

/// A context's mutable state.
@MainActor
public protocol StateStore<State>: AnyObject {
    /// The state's type.
    associatedtype State: Equatable
    /// The current state.
    var state: State { get set }
}

/// Any ``StateStore`` of one state type.
@MainActor
public final class AnyStateStore<State: Equatable>: StateStore {
    private let read: () -> State
    private let write: (State) -> Void

    /// Wraps `base`, or takes the wrapped store of another `AnyStateStore`.
    public init<Base: StateStore>(_ base: Base) where Base.State == State {
        read = { base.state }
        write = { base.state = $0 }
    }

    /// The wrapped store's state.
    public var state: State {
        get { read() }
        set { write(newValue) }
    }
}

/// A state and the view state made from it, published as it changes.
@MainActor
public final class Store<State: Equatable, ViewState: Equatable>: StateStore {
    /// The state; setting a different value publishes its view state.
    public var state: State {
        didSet {
            guard state != oldValue else { return }
            viewState = transform(state)
            subject.send(viewState)
        }
    }

    /// The view state of the current state.
    public private(set) var viewState: ViewState

    /// The view state now and at every change.
    public var viewStatePublisher: AnyPublisher<ViewState, Never> {
        subject.removeDuplicates().eraseToAnyPublisher()
    }

    private let subject: CurrentValueSubject<ViewState, Never>
    private let transform: (State) -> ViewState

    /// A store that makes view states with `transform`.
    public init<T: Transform>(state: State, transform: T) where T.Input == State, T.Output == ViewState {
        let viewState = transform(state)
        self.state = state
        self.viewState = viewState
        self.subject = CurrentValueSubject(viewState)
        self.transform = { transform($0) }
    }
}
