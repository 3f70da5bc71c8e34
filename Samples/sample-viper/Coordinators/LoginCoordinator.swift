/// Coordinates the login scene, and tells its parent who logged in.
final class LoginCoordinator: Coordinator, LoginCoordinatorInput {
    weak var parent: AppCoordinatorInput?
    private let dependencies: AppDependencies

    init(navigationController: NavigationController, dependencies: AppDependencies) {
        self.dependencies = dependencies
        super.init(navigationController: navigationController)
    }

    override func start() {
        setRoot(LoginModuleBuilder.build(coordinator: self, dependencies: dependencies))
    }

    func loginDidFinish(user: User) {
        parent?.userDidLogIn(user)
    }
}
