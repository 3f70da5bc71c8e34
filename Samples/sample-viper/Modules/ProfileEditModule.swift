// The Profile edit scene: renames the user, then goes back to the display scene.

protocol ProfileEditViewInput: AnyObject {
    func show(name: String)
}

protocol ProfileEditPresenterInput: AnyObject {
    func saveTapped(name: String)
}

protocol ProfileEditRouterInput: AnyObject {
    func routeBackToDisplay()
}

final class ProfileEditViewController: ViewController, ProfileEditViewInput {
    var presenter: ProfileEditPresenterInput?
    private(set) var name = ""

    func show(name: String) { self.name = name }

    /// The user taps "Save".
    func tapSave(name: String) { presenter?.saveTapped(name: name) }
}

final class ProfileEditPresenter: ProfileEditPresenterInput {
    /// The view, weakly: the view keeps the presenter, so a strong reference back would be a
    /// retain cycle, the mistake the seed warns about.
    weak var view: ProfileEditViewInput?
    /// Set only with `--leak retain-cycle`: that very mistake, the view held strongly.
    var strongView: ProfileEditViewInput?
    private let interactor: UserInteractorInput
    private let router: ProfileEditRouterInput

    init(interactor: UserInteractorInput, router: ProfileEditRouterInput) {
        self.interactor = interactor
        self.router = router
    }

    func saveTapped(name: String) {
        if let user = interactor.rename(to: name) { view?.show(name: user.name) }
        router.routeBackToDisplay()
    }
}

final class ProfileEditRouter: ProfileEditRouterInput {
    weak var coordinator: ProfileCoordinatorInput?

    func routeBackToDisplay() { coordinator?.editDidFinish() }
}

enum ProfileEditModuleBuilder {
    static func build(coordinator: ProfileCoordinatorInput, dependencies: AppDependencies) -> ViperModule {
        let view = ProfileEditViewController(title: "Edit profile")
        let interactor = UserInteractor(store: dependencies.userStore)
        let router = ProfileEditRouter()
        router.coordinator = coordinator
        let presenter = ProfileEditPresenter(interactor: interactor, router: router)
        presenter.view = view
        if dependencies.injectsLeak {
            // LEAK (--leak retain-cycle): view → presenter → view. Once the scene is popped,
            // nothing outside the cycle holds it, and nothing breaks it: the whole module stays.
            presenter.strongView = view
        }
        view.presenter = presenter
        return ViperModule(
            name: "ProfileEditModule", view: view, presenter: presenter, interactor: interactor, router: router)
    }
}
