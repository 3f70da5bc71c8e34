// The Profile display scene: shows the user's name and leads to the edit scene.

protocol ProfileDisplayViewInput: AnyObject {
    func show(name: String)
}

protocol ProfileDisplayPresenterInput: AnyObject {
    func viewWillAppear()
    func editTapped()
}

protocol ProfileDisplayRouterInput: AnyObject {
    func routeToEdit()
}

final class ProfileDisplayViewController: ViewController, ProfileDisplayViewInput {
    var presenter: ProfileDisplayPresenterInput?
    private(set) var name = ""

    func show(name: String) { self.name = name }

    /// The user taps "Edit".
    func tapEdit() { presenter?.editTapped() }
}

final class ProfileDisplayPresenter: ProfileDisplayPresenterInput {
    weak var view: ProfileDisplayViewInput?
    private let interactor: UserInteractorInput
    private let router: ProfileDisplayRouterInput

    init(interactor: UserInteractorInput, router: ProfileDisplayRouterInput) {
        self.interactor = interactor
        self.router = router
    }

    func viewWillAppear() {
        view?.show(name: interactor.currentUser?.name ?? "")
    }

    func editTapped() { router.routeToEdit() }
}

final class ProfileDisplayRouter: ProfileDisplayRouterInput {
    weak var coordinator: ProfileCoordinatorInput?

    func routeToEdit() { coordinator?.showEdit() }
}

enum ProfileDisplayModuleBuilder {
    static func build(coordinator: ProfileCoordinatorInput, dependencies: AppDependencies) -> ViperModule {
        let view = ProfileDisplayViewController(title: "Profile")
        let interactor = UserInteractor(store: dependencies.userStore)
        let router = ProfileDisplayRouter()
        router.coordinator = coordinator
        let presenter = ProfileDisplayPresenter(interactor: interactor, router: router)
        presenter.view = view
        view.presenter = presenter
        presenter.viewWillAppear()
        return ViperModule(
            name: "ProfileDisplayModule", view: view, presenter: presenter, interactor: interactor, router: router)
    }
}
