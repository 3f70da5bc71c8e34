import Synchronization

/// A boolean that can be set once from any thread.
package final class AtomicFlag: Sendable {
    private let value = Atomic<Bool>(false)

    /// A flag not set yet.
    package init() {}

    package var isSet: Bool { value.load(ordering: .acquiring) }

    package func set() { value.store(true, ordering: .releasing) }

    /// Sets the flag; returns true only for the caller that set it first.
    package func setIfClear() -> Bool {
        value.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged
    }
}
