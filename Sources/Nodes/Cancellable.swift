/// Something that can be cancelled: a subscription, a running task, an observation. Kept in a
/// `Set` by ``AbstractContext`` and ``AbstractWorker``, so compared by identity.
///
/// Combine's `AnyCancellable` is one through the `NodesCombine` product; without Combine,
/// ``CancellationToken`` is this runtime's.
public protocol Cancellable: AnyObject, Hashable {
    /// Stops the work; calling it again does nothing.
    func cancel()
}

/// A type-erased cancellable that cancels when it is deallocated, compared by identity.
///
/// Named apart from Combine's `AnyCancellable`, so that a file importing both this module and
/// `NodesCombine` (or OpenCombine) has exactly one `AnyCancellable`.
public final class CancellationToken: Cancellable {
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
    public func store(in set: inout Set<CancellationToken>) {
        set.insert(self)
    }

    /// Identity equality.
    public static func == (lhs: CancellationToken, rhs: CancellationToken) -> Bool { lhs === rhs }

    /// Identity hash.
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension Set where Element == CancellationToken {
    /// Cancels every element and, unless `keepCancellables`, forgets them and watches each for
    /// release (``LeakDetector/detect(_:delay:)``).
    public mutating func cancelAll(keepingCancellables keepCancellables: Bool = false) {
        for cancellable in self {
            cancellable.cancel()
            if !keepCancellables { LeakDetector.detect(cancellable) }
        }
        if !keepCancellables { removeAll() }
    }
}

extension Set where Element: Cancellable {
    /// Cancels every element, has ``LeakDetector`` watch each for its release, and empties the
    /// set: what a context does on deactivation and a worker when it stops.
    mutating func cancelAndWatchAll() {
        for cancellable in self {
            cancellable.cancel()
            LeakDetector.detect(cancellable)
        }
        removeAll()
    }
}
