/// A value that changes over time and tells its observers, without Combine.
///
/// Observers are called synchronously, on the thread that sets the value, first with the current
/// value when they subscribe and then on every change. Observing returns an ``AnyCancellable``;
/// an observation lives until it is cancelled or that cancellable is deallocated.
public final class MutableState<Value> {
    private var observers: [(id: UInt64, handler: (Value) -> Void)] = []
    private var nextObserverID: UInt64 = 0

    /// The current value; setting it notifies every observer.
    public var value: Value {
        didSet { notify() }
    }

    /// A state with an initial value.
    public init(_ initial: Value) {
        self.value = initial
    }

    /// How many observations are live.
    public var observerCount: Int { observers.count }

    /// Calls `handler` with the current value now and with every later value.
    public func observe(_ handler: @escaping (Value) -> Void) -> AnyCancellable {
        nextObserverID += 1
        let id = nextObserverID
        observers.append((id, handler))
        handler(value)
        return AnyCancellable { [weak self] in
            self?.observers.removeAll { $0.id == id }
        }
    }

    /// Observes the state through a transform, delivering each output to `observer`.
    public func observe<T: Transform, O: StateObserver>(
        transform: T, observer: O
    ) -> AnyCancellable where T.Input == Value, O.StateType == T.Output {
        observe { [weak observer] value in observer?.update(with: transform(value)) }
    }

    /// Applies `change` to the value in place and notifies once.
    public func mutate(_ change: (inout Value) -> Void) {
        var copy = value
        change(&copy)
        value = copy
    }

    private func notify() {
        for observer in observers { observer.handler(value) }
    }
}

/// Something that takes states of one type: a view taking view state, a presenter, a test probe.
public protocol StateObserver: AnyObject {
    /// The state it takes.
    associatedtype StateType
    /// Receives a new state.
    func update(with state: StateType)
}

/// A pure conversion from one state to another, typically from a context's state to view state.
public protocol Transform {
    /// The state it reads.
    associatedtype Input
    /// What it produces.
    associatedtype Output
    /// Converts `input`.
    func callAsFunction(_ input: Input) -> Output
}

/// A transform made from a closure.
public struct ClosureTransform<Input, Output>: Transform {
    private let body: (Input) -> Output

    /// Wraps `body`.
    public init(_ body: @escaping (Input) -> Output) {
        self.body = body
    }

    /// Converts `input` with the closure.
    public func callAsFunction(_ input: Input) -> Output { body(input) }
}

/// A view that displays a view state: the receiving end of `MutableState.observe(transform:observer:)`.
public protocol WithViewState: StateObserver {
    /// The state the view displays.
    associatedtype ViewState where ViewState == StateType
    /// What the view currently shows.
    var viewState: ViewState? { get }
}
