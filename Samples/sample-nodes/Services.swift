import Nodes

/// A session shared by every node of the app: the kind of long-lived service that outlives the
/// nodes that use it, and so the usual place where a node gets retained by mistake.
final class Session {
    private(set) var user: String?
    /// Listeners notified on every change of user. Closures kept here live as long as the session.
    private var listeners: [(String?) -> Void] = []
    /// Subscriptions that live as long as the session. A node's subscription does not belong
    /// here: it belongs in its context's `cancellables`, which deactivation cancels.
    var cancellables = Set<CancellationToken>()

    func logIn(as user: String) {
        self.user = user
        listeners.forEach { $0(user) }
    }

    func logOut() {
        user = nil
        listeners.forEach { $0(nil) }
    }

    /// Keeps `listener` for the life of the session.
    func onChange(_ listener: @escaping (String?) -> Void) {
        listeners.append(listener)
    }
}

/// The app's one-second timer, advanced by the script. Like a run loop, it keeps every
/// scheduled timer, and so the timer's closure, until the timer is invalidated.
final class Ticker {
    /// A repeating timer; it runs on every tick until ``invalidate()``.
    final class Timer {
        fileprivate var block: (() -> Void)?
        fileprivate weak var ticker: Ticker?
        fileprivate init(block: @escaping () -> Void) { self.block = block }

        func invalidate() {
            block = nil
            ticker?.timers.removeAll { $0 === self }
        }
    }

    fileprivate var timers: [Timer] = []

    /// Schedules `block` on every tick until the timer is invalidated.
    func scheduledTimer(_ block: @escaping () -> Void) -> Timer {
        let timer = Timer(block: block)
        timer.ticker = self
        timers.append(timer)
        return timer
    }

    /// One second passes.
    func tick() {
        for timer in timers { timer.block?() }
    }
}

/// Screen analytics: which screens were shown, by name.
final class Analytics {
    private(set) var screenNames: [String] = []
    /// Screens kept to be described later. A view kept here outlives its node (`--leak view`).
    private var pendingScreens: [ViewControllable] = []

    /// Records a screen by name: what analytics needs.
    func track(screenNamed name: String) {
        screenNames.append(name)
    }

    /// Records a screen by keeping its view until the next report, which never comes.
    func track(screen view: ViewControllable) {
        pendingScreens.append(view)
    }
}

/// The feed's data, observed by its view through a transform.
struct FeedState {
    var items: [String] = []
    var isRefreshing = false
    var bookmarked: Set<String> = []
}

/// The user's settings, observed by the settings tab.
struct Preferences {
    var darkMode = false
    var notifications = true
}

/// Feature flags that drive the plugin lists (the A/B variant of the feed).
final class FeatureFlags {
    var enabled: Set<String>
    init(_ enabled: Set<String>) { self.enabled = enabled }
}

/// The leak that `--leak KIND` injects: each is a real retain, in a node that the script
/// detaches, so that it stays alive after its detach. See README.md.
enum InjectedLeak: String, CaseIterable {
    /// The session keeps a closure that captures the profile's context.
    case retainCycle = "retain-cycle"
    /// The settings' sync worker leaves its timer running, holding itself and its context.
    case worker
    /// The detail's observation is stored in the session instead of its context.
    case subscription
    /// The analytics service keeps the share sheet's view.
    case view
}

/// The root of the dependency graph.
final class AppComponent: BootstrapComponent {
    let flags: FeatureFlags
    let injectedLeak: InjectedLeak?

    init(flags: FeatureFlags, injectedLeak: InjectedLeak?) {
        self.flags = flags
        self.injectedLeak = injectedLeak
        super.init()
    }

    var session: Session { shared { Session() } }
    var ticker: Ticker { shared { Ticker() } }
    var analytics: Analytics { shared { Analytics() } }
    var feedState: ObservableState<FeedState> { shared { ObservableState(FeedState()) } }
    var preferences: ObservableState<Preferences> { shared { ObservableState(Preferences()) } }
}
