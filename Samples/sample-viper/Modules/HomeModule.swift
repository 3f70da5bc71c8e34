// The Home scene: greets the user and leads to the profile.

protocol HomeViewInput: AnyObject {
    func show(greeting: String)
}

protocol HomePresenterInput: AnyObject {
    func viewDidLoad()
    func profileTapped()
}

protocol HomeRouterInput: AnyObject {
    func routeToProfile()
}

/// What the Home scene asks of its coordinator.
protocol HomeCoordinatorInput: AnyObject {
    func showProfile()
}

final class HomeViewController: ViewController, HomeViewInput {
    var presenter: HomePresenterInput?
    private(set) var greeting = ""

    func show(greeting: String) { self.greeting = greeting }

    /// The user taps "Profile".
    func tapProfile() { presenter?.profileTapped() }
}

final class HomePresenter: HomePresenterInput {
    weak var view: HomeViewInput?
    private let interactor: UserInteractorInput
    private let router: HomeRouterInput

    init(interactor: UserInteractorInput, router: HomeRouterInput) {
        self.interactor = interactor
        self.router = router
    }

    func viewDidLoad() {
        view?.show(greeting: "Hello, \(interactor.currentUser?.name ?? "stranger")")
    }

    func profileTapped() { router.routeToProfile() }
}

final class HomeRouter: HomeRouterInput {
    weak var coordinator: HomeCoordinatorInput?

    func routeToProfile() { coordinator?.showProfile() }
}

enum HomeModuleBuilder {
    static func build(coordinator: HomeCoordinatorInput, dependencies: AppDependencies) -> ViperModule {
        let view = HomeViewController(title: "Home")
        let interactor = UserInteractor(store: dependencies.userStore)
        let router = HomeRouter()
        router.coordinator = coordinator
        let presenter = HomePresenter(interactor: interactor, router: router)
        presenter.view = view
        view.presenter = presenter
        presenter.viewDidLoad()
        return ViperModule(name: "HomeModule", view: view, presenter: presenter, interactor: interactor, router: router)
    }
}
