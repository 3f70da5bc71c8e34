import Nodes

/// A session shared by every node of the app: the kind of long-lived service that outlives the
/// nodes that use it, and so the usual place where a node gets retained by mistake.
final class Session {
    private(set) var user: String?
    /// Listeners notified on every change of user. Closures kept here live as long as the session.
    private var listeners: [(String?) -> Void] = []

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

/// The feed's data, observed by its view through a transform.
struct FeedState {
    var items: [String] = []
    var isRefreshing = false
}

/// Feature flags that drive the plugin lists (the A/B variant of the feed).
final class FeatureFlags {
    var enabled: Set<String>
    init(_ enabled: Set<String>) { self.enabled = enabled }
}

/// The root of the dependency graph.
final class AppComponent: BootstrapComponent {
    let flags: FeatureFlags
    init(flags: FeatureFlags) {
        self.flags = flags
        super.init()
    }

    var session: Session { shared { Session() } }
    var feedState: MutableState<FeedState> { shared { MutableState(FeedState()) } }
}
