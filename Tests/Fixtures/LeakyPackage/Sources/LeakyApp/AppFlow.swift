import Nodes

/// The app's root node: it shows the home screen and opens profile and settings on top.
public final class AppFlow: AbstractFlow<AppContext, HeadlessViewController> {
    /// A root flow with its own context and view.
    public init() {
        super.init(context: AppContext(workers: []), viewController: HeadlessViewController(title: "App"))
    }

    /// Opens the profile of `user`.
    @discardableResult
    public func openProfile(of user: String) -> ProfileFlow {
        let profile = ProfileFlow(user: user)
        viewController.present(profile.getViewController())
        attach(starting: profile)
        return profile
    }

    /// Closes the profile that is open.
    public func closeProfile() {
        guard let profile = firstSubFlow(ofType: ProfileFlow.self) else { return }
        detach(ending: profile)
        viewController.dismiss(profile.getViewController())
    }

    /// Opens the settings.
    @discardableResult
    public func openSettings() -> SettingsFlow {
        let settings = SettingsFlow()
        viewController.present(settings.getViewController())
        attach(starting: settings)
        return settings
    }

    /// Closes the settings.
    public func closeSettings() {
        guard let settings = firstSubFlow(ofType: SettingsFlow.self) else { return }
        detach(ending: settings)
        viewController.dismiss(settings.getViewController())
    }
}

/// The root node's context.
public final class AppContext: AbstractContext<CancellationToken> {}
