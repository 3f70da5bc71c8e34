/// A private tracker, leak detector and recording sink for one test, bound as the current ones
/// for the duration of a closure, so that tests running in parallel never see each other's nodes.
///
/// Start the flows inside ``run(_:)`` (building them may happen anywhere: a root flow reports to
/// the scope that is current when it starts, and children report where their parent does), then
/// ask for ``leaksAfterGrace()``, which refuses to answer when no node reported to the scope:
///
/// ```swift
/// let scope = TrackingScope()
/// let app = AppFlow()
/// let window = HeadlessWindow()
/// scope.run { window.launch(app) }
/// scope.run { app.openProfile(); app.closeProfile() }
/// #expect(try scope.leaksAfterGrace().isEmpty)
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

    /// Runs `body` with this scope's tracker and leak detector as the current ones.
    public func run<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T {
        try await NodeTracker.$current.withValue(
            tracker,
            operation: { try await LeakDetector.$current.withValue(leakDetector, operation: body, isolation: isolation) },
            isolation: isolation)
    }

    /// Lets the leak detector's grace run out.
    public func elapseGrace() {
        scheduler.advance(byNanoseconds: leakDetector.graceNanoseconds)
    }

    /// How many nodes were attached under the scope's tracker.
    public var attachedNodeCount: Int {
        sink.events.count { if case .attached = $0.change { true } else { false } }
    }

    /// Lets the grace run out and returns what the scope's leak detector reported: empty when
    /// every node detached in the scope was released.
    ///
    /// Throws instead of answering when no node was attached under the scope, because then the
    /// flows reported to another tracker and detector (they were started outside ``run(_:)``),
    /// and an empty answer would say nothing about their leaks.
    public func leaksAfterGrace() throws(TrackingScopeError) -> [LeakDetector.Leak] {
        guard attachedNodeCount > 0 else { throw TrackingScopeError.nothingTracked }
        elapseGrace()
        return leaks.reported
    }
}

/// Why a ``TrackingScope`` refuses to judge.
public struct TrackingScopeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// No node was attached under the scope.
        case nothingTracked
    }

    /// What went wrong.
    public var code: Code
    /// What happened and what to do.
    public var message: String

    /// No node was attached under the scope.
    public static let nothingTracked = TrackingScopeError(
        code: .nothingTracked,
        message:
            "no node was attached under this TrackingScope, so it cannot tell whether any leaked: start the flows inside "
            + "scope.run { … } (window.launch(app), attach(starting:)); a flow started outside reports to the shared "
            + "tracker and leak detector instead")

    public var description: String { message }
}
