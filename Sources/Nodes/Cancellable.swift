/// Something that can be cancelled: a subscription, a running task, an observation.
public protocol Cancellable {
    /// Stops the work; calling it again does nothing.
    func cancel()
}

/// A type-erased cancellable that cancels when it is deallocated, compared by identity so that
/// it can be kept in a `Set` (as `AbstractContext.cancellables` does).
public final class AnyCancellable: Cancellable, Hashable {
    private var onCancel: (() -> Void)?

    /// Wraps a cancel action; it runs at most once.
    public init(_ cancel: @escaping () -> Void) {
        self.onCancel = cancel
    }

    /// Wraps another cancellable.
    public convenience init(_ cancellable: some Cancellable) {
        self.init { cancellable.cancel() }
    }

    deinit {
        onCancel?()
    }

    /// Runs the cancel action once.
    public func cancel() {
        let action = onCancel
        onCancel = nil
        action?()
    }

    /// Whether `cancel` has run.
    public var isCancelled: Bool { onCancel == nil }

    /// Keeps this cancellable in `set`.
    public func store(in set: inout Set<AnyCancellable>) {
        set.insert(self)
    }

    /// Identity equality.
    public static func == (lhs: AnyCancellable, rhs: AnyCancellable) -> Bool { lhs === rhs }

    /// Identity hash.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
