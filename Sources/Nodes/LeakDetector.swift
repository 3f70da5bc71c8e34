import Synchronization

/// Watches the objects of a detached node through weak references and reports any that is
/// still alive when the grace has run out.
///
/// The runtime asks it to watch every node it detaches. What happens to a leak is the
/// ``handler``'s choice: by default one line on standard error. It never crashes a test run.
///
/// To choose the handler for a whole app, set it on the shared detector once, at launch:
///
/// ```swift
/// LeakDetector.shared.handler = { leak in myLogger.warning("\(leak)") }
/// ```
///
/// Flows use ``current``, which is ``shared`` unless a task binds another detector (as
/// `NodesTesting.TrackingScope` does for one test).
///
/// Time comes from a ``LeakCheckScheduler``, so tests drive it with a manual scheduler (see
/// `NodesTesting.ManualScheduler`) instead of sleeping.
public final class LeakDetector: Sendable {
    /// A watched object still alive after the grace.
    public struct Leak: Sendable, CustomStringConvertible {
        /// The name of the node the object belonged to.
        public let node: String
        /// The object's dynamic type name.
        public let typeName: String
        /// The grace that ran out, in nanoseconds.
        public let graceNanoseconds: UInt64

        /// Creates a leak record.
        public init(node: String, typeName: String, graceNanoseconds: UInt64) {
            self.node = node
            self.typeName = typeName
            self.graceNanoseconds = graceNanoseconds
        }

        /// `LoggedInFlow: LoggedInContextImp still alive 1000 ms after detach`.
        public var description: String {
            "\(node): \(typeName) still alive \(graceNanoseconds / 1_000_000) ms after detach"
        }
    }

    /// The process-wide detector, with a 1 s grace, logging to standard error. Like the Nodes
    /// framework's, it is on in debug builds and off in release builds (set `isEnabled`). Set
    /// its ``handler`` to choose what a leak does in the whole app.
    public static let shared: LeakDetector = {
        let detector = LeakDetector()
        #if !DEBUG
        detector.isEnabled = false
        #endif
        return detector
    }()

    /// The detector that newly created flows use: ``shared`` unless a task binds another.
    @TaskLocal public static var current: LeakDetector = .shared

    /// How long a detached object may live, in nanoseconds.
    public let graceNanoseconds: UInt64

    private let scheduler: any LeakCheckScheduler
    private let handlerStorage: Mutex<@Sendable (Leak) -> Void>
    private let enabled = Atomic<Bool>(true)

    /// Creates a detector.
    ///
    /// - Parameters:
    ///   - graceNanoseconds: how long a detached object may live; 1 s by default.
    ///   - scheduler: what runs the check once the grace has passed.
    ///   - handler: what to do with each leak; one line on standard error by default.
    public init(
        graceNanoseconds: UInt64 = 1_000_000_000,
        scheduler: any LeakCheckScheduler = GraceTimer.shared,
        handler: @escaping @Sendable (Leak) -> Void = LeakDetector.logToStandardError
    ) {
        self.graceNanoseconds = graceNanoseconds
        self.scheduler = scheduler
        self.handlerStorage = Mutex(handler)
    }

    /// What the detector does with each leak; one line on standard error unless set otherwise.
    ///
    /// Setting it is safe from any thread at any time. It is read when a grace runs out, so a
    /// new handler also receives the leaks of checks already scheduled. Set it on ``shared`` to
    /// choose for the whole app.
    public var handler: @Sendable (Leak) -> Void {
        get { handlerStorage.withLock { $0 } }
        set { handlerStorage.withLock { $0 = newValue } }
    }

    /// Whether `expectRelease` watches anything. Turning it off does not cancel checks already
    /// scheduled.
    public var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// Expects every object in `objects` to be released within the grace.
    public func expectRelease(of objects: [AnyObject], node: String) {
        expectRelease(of: objects, node: node, within: graceNanoseconds)
    }

    /// Expects `object` to be released within `delay` seconds, through the current detector
    /// (``current``): the Nodes framework's way to watch one object, such as a cancellable just
    /// cancelled. Its leak is reported by the detector's ``handler`` under the object's type name.
    public static func detect(_ object: AnyObject, delay: Double = 1) {
        let detector = current
        guard detector.isEnabled else { return }
        let nanoseconds = delay > 0 ? UInt64(min(delay, 86_400) * 1_000_000_000) : 0
        detector.expectRelease(of: [object], node: String(describing: type(of: object)), within: nanoseconds)
    }

    private func expectRelease(of objects: [AnyObject], node: String, within grace: UInt64) {
        guard isEnabled, !objects.isEmpty else { return }
        var seen = Set<ObjectIdentifier>()
        let watched = objects.filter { seen.insert(ObjectIdentifier($0)).inserted }
            .map { (WeakReference($0), String(describing: type(of: $0))) }
        scheduler.schedule(afterNanoseconds: grace) { [self] in
            let leaks = watched.filter { !$0.0.isReleased }
                .map { Leak(node: node, typeName: $0.1, graceNanoseconds: grace) }
            guard !leaks.isEmpty else { return }
            let handler = self.handler
            for leak in leaks { handler(leak) }
        }
    }

    /// The default handler: one line on standard error.
    public static let logToStandardError: @Sendable (Leak) -> Void = { leak in
        StandardError.write("[nodes] leak: \(leak)\n")
    }
}

/// Runs a check after a delay. ``GraceTimer`` is the real one.
public protocol LeakCheckScheduler: Sendable {
    /// Runs `work` once `nanoseconds` have passed.
    func schedule(afterNanoseconds nanoseconds: UInt64, _ work: @escaping @Sendable () -> Void)
}

extension GraceTimer: LeakCheckScheduler {}
