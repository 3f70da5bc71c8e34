/// A private tracker, leak detector and recording sink for one test, bound as the current ones
/// for the duration of a closure, so that tests running in parallel never see each other's nodes.
///
/// ```swift
/// let scope = TrackingScope()
/// scope.run {
///     window.launch(RootBuilder().build())
/// }
/// #expect(scope.sink.lines.first == "attached Root under root")
/// ```
public final class TrackingScope: Sendable {
    /// The scope's tracker (recording).
    public let tracker = NodeTracker()
    /// Every event of the scope's tracker.
    public let sink = RecordingSink()
    /// The scope's manual clock for leak checks.
    public let scheduler = ManualScheduler()
    /// What the scope's leak detector reported.
    public let leaks = LeakCollector()
    /// The scope's leak detector (manual clock, collecting handler).
    public let leakDetector: LeakDetector

    /// A scope whose leak detector uses the given grace.
    public init(graceNanoseconds: UInt64 = 1_000_000_000) {
        leakDetector = LeakDetector(graceNanoseconds: graceNanoseconds, scheduler: scheduler, handler: leaks.handler)
        tracker.addSink(sink)
    }

    /// Runs `body` with this scope's tracker and leak detector as the current ones.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        try NodeTracker.$current.withValue(tracker) {
            try LeakDetector.$current.withValue(leakDetector) { try body() }
        }
    }

    /// Lets the leak detector's grace run out.
    public func elapseGrace() {
        scheduler.advance(byNanoseconds: leakDetector.graceNanoseconds)
    }
}
