/// The user, as the interactors share it between layers.
struct User {
    var name: String
}

/// Where the app keeps its user: a model that outlives every scene.
final class UserStore {
    var currentUser: User?
}

/// What the app's builders share.
final class AppDependencies {
    let userStore = UserStore()
    /// Whether `--leak retain-cycle` was asked for (see ProfileEditModule.swift).
    let injectsLeak: Bool

    init(injectsLeak: Bool) {
        self.injectsLeak = injectsLeak
    }
}
