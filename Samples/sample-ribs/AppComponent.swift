/// The root of the RIBs' dependency graph: what the whole app shares. Each builder gets its
/// dependencies from its parent's component and makes a component for its own scope.
final class AppComponent {
    /// Whether `--leak retain-cycle` was asked for: the Request RIB then forgets to dispose
    /// its subscription (see RequestRIB.swift).
    let injectsLeak: Bool

    init(injectsLeak: Bool) {
        self.injectsLeak = injectsLeak
    }
}

/// A rider's profile, which the LoggedIn scope streams down to its children.
struct RiderProfile {
    var name: String
    var rating: Double
}
