import Glibc
import Nodes

/// The profile screen's node. Its context registers with the app-wide ``ActivityCenter`` while
/// active and — the bug this fixture is about — forgets to unregister, so the long-lived center
/// keeps every closed profile's context alive. `LEAKY_FIXTURE_CLEAN=1` turns the fix on.
public final class ProfileFlow: AbstractFlow<ProfileContext, HeadlessViewController> {
    /// A profile node for `user`.
    public init(user: String) {
        super.init(
            context: ProfileContext(user: user, workers: [AvatarWorker()]),
            viewController: HeadlessViewController(title: "Profile \(user)"))
    }
}

/// The profile's context.
public final class ProfileContext: AbstractContext<CancellationToken> {
    /// Whose profile it is.
    public let user: String

    /// Whether the fix is on (it is when `LEAKY_FIXTURE_CLEAN` is set to 1).
    public static let unregistersOnResign = getenv("LEAKY_FIXTURE_CLEAN").map { String(cString: $0) == "1" } ?? false

    /// A context for `user`.
    public init(user: String, workers: [Worker]) {
        self.user = user
        super.init(workers: workers)
    }

    public override func didBecomeActive() {
        ActivityCenter.shared.register(self)
    }

    public override func willResignActive() {
        if Self.unregistersOnResign { ActivityCenter.shared.unregister(self) }
    }
}

/// Loads the avatar while the profile is shown.
public final class AvatarWorker: AbstractWorker<CancellationToken> {}

/// A long-lived object: the app's activity center, which keeps its listeners strongly.
public final class ActivityCenter: @unchecked Sendable {
    // `listeners` is only touched under `mutex`.
    /// The app-wide center.
    public static let shared = ActivityCenter()

    private var mutex = pthread_mutex_t()
    private var listeners: [AnyObject] = []

    private init() { pthread_mutex_init(&mutex, nil) }

    /// Adds a listener (strongly).
    public func register(_ listener: AnyObject) {
        locked { listeners.append(listener) }
    }

    /// Removes a listener.
    public func unregister(_ listener: AnyObject) {
        locked { listeners.removeAll { $0 === listener } }
    }

    /// How many listeners it keeps.
    public var count: Int { locked { listeners.count } }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        return body()
    }
}
