import Synchronization

/// A boolean that can be set once from any thread.
final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .acquiring) }

    func set() { value.store(true, ordering: .releasing) }

    /// Sets the flag; returns true only for the caller that set it first.
    func setIfClear() -> Bool {
        value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
