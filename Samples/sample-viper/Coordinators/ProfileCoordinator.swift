/// What the profile scenes ask of their coordinator.
protocol ProfileCoordinatorInput: AnyObject {
    func showEdit()
    func editDidFinish()
}

/// One coordinator for a group of scenes, as the seed puts it: the profile display and edit.
final class ProfileCoordinator: Coordinator, ProfileCoordinatorInput {
    private let dependencies: AppDependencies
    /// The edit scene while it is shown; weakly, as coordinators hold views.
    private weak var editView: ViewController?

    init(navigationController: NavigationController, dependencies: AppDependencies) {
        self.dependencies = dependencies
        super.init(navigationController: navigationController)
    }

    override func start() {
        push(ProfileDisplayModuleBuilder.build(coordinator: self, dependencies: dependencies))
    }

    func showEdit() {
        let module = ProfileEditModuleBuilder.build(coordinator: self, dependencies: dependencies)
        editView = module.view
        push(module)
    }

    func editDidFinish() {
        if let editView { remove(editView) }
        (navigationController.top(ProfileDisplayViewController.self)?.presenter)?.viewWillAppear()
    }
}
