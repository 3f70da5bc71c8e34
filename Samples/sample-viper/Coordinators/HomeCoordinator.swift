/// Coordinates the home scene, and starts the profile coordinator from it.
final class HomeCoordinator: Coordinator, HomeCoordinatorInput {
    private let dependencies: AppDependencies

    init(navigationController: NavigationController, dependencies: AppDependencies) {
        self.dependencies = dependencies
        super.init(navigationController: navigationController)
    }

    override func start() {
        setRoot(HomeModuleBuilder.build(coordinator: self, dependencies: dependencies))
    }

    func showProfile() {
        startChild(ProfileCoordinator(navigationController: navigationController, dependencies: dependencies))
    }
}
