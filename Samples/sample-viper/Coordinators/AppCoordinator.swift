/// What the app coordinator's children tell it.
protocol AppCoordinatorInput: AnyObject {
    func userDidLogIn(_ user: User)
}

/// The root coordinator: login first, then home.
final class AppCoordinator: Coordinator, AppCoordinatorInput {
    private let dependencies: AppDependencies

    init(navigationController: NavigationController, dependencies: AppDependencies) {
        self.dependencies = dependencies
        super.init(navigationController: navigationController)
    }

    override func start() {
        let login = LoginCoordinator(navigationController: navigationController, dependencies: dependencies)
        login.parent = self
        startChild(login)
    }

    func userDidLogIn(_ user: User) {
        for login in children where login is LoginCoordinator { finishChild(login) }
        startChild(HomeCoordinator(navigationController: navigationController, dependencies: dependencies))
    }
}
