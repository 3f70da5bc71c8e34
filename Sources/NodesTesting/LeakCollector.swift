import Synchronization

/// Collects what a ``LeakDetector`` reports, for assertions.
public final class LeakCollector: Sendable {
    private let leaks = Mutex<[LeakDetector.Leak]>([])

    /// An empty collector.
    public init() {}

    /// The handler to give the detector.
    public var handler: @Sendable (LeakDetector.Leak) -> Void {
        { [self] leak in leaks.withLock { $0.append(leak) } }
    }

    /// Every leak reported so far.
    public var reported: [LeakDetector.Leak] { leaks.withLock { $0 } }
}
