/// A value that changes over time and tells its observers, without Combine (with Combine, a
/// `CurrentValueSubject` plays this part).
///
/// Observers are called synchronously, on the thread that sets the value, first with the current
/// value when they subscribe and then on every change. Observing returns a ``CancellationToken``;
/// an observation lives until it is cancelled or that token is deallocated.
public final class ObservableState<Value> {
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
    public func observe(_ handler: @escaping (Value) -> Void) -> CancellationToken {
        nextObserverID += 1
        let id = nextObserverID
        observers.append((id, handler))
        handler(value)
        return CancellationToken { [weak self] in
            self?.observers.removeAll { $0.id == id }
        }
    }

    /// Observes the state through a transform, delivering each output to `observer`. Observers
    /// are main-actor objects, as in the Nodes framework: set the value on the main actor (a
    /// value set elsewhere traps, as any main-actor code run off it does).
    @MainActor
    public func observe<T: Transform, O: StateObserver>(
        transform: T, observer: O
    ) -> CancellationToken where T.Input == Value, O.StateObserverStateType == T.Output {
        observe { [weak observer] value in
            MainActor.assumeIsolated { observer?.update(with: transform(value)) }
        }
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
