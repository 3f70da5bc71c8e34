// The Login scene: the user types a name and logs in.

protocol LoginViewInput: AnyObject {
    func show(message: String)
}

protocol LoginPresenterInput: AnyObject {
    func logInTapped(name: String)
}

protocol LoginRouterInput: AnyObject {
    func routeToHome(user: User)
}

/// What the Login scene asks of its coordinator.
protocol LoginCoordinatorInput: AnyObject {
    func loginDidFinish(user: User)
}

final class LoginViewController: ViewController, LoginViewInput {
    var presenter: LoginPresenterInput?
    private(set) var message = ""

    func show(message: String) { self.message = message }

    /// The user taps "Log in".
    func tapLogIn(name: String) { presenter?.logInTapped(name: name) }
}

final class LoginPresenter: LoginPresenterInput {
    weak var view: LoginViewInput?
    private let interactor: UserInteractorInput
    private let router: LoginRouterInput

    init(interactor: UserInteractorInput, router: LoginRouterInput) {
        self.interactor = interactor
        self.router = router
    }

    func logInTapped(name: String) {
        let user = interactor.logIn(name: name)
        view?.show(message: "Welcome, \(user.name)")
        router.routeToHome(user: user)
    }
}

final class LoginRouter: LoginRouterInput {
    weak var coordinator: LoginCoordinatorInput?

    func routeToHome(user: User) { coordinator?.loginDidFinish(user: user) }
}

enum LoginModuleBuilder {
    static func build(coordinator: LoginCoordinatorInput, dependencies: AppDependencies) -> ViperModule {
        let view = LoginViewController(title: "Login")
        let interactor = UserInteractor(store: dependencies.userStore)
        let router = LoginRouter()
        router.coordinator = coordinator
        let presenter = LoginPresenter(interactor: interactor, router: router)
        presenter.view = view
        view.presenter = presenter
        return ViperModule(name: "LoginModule", view: view, presenter: presenter, interactor: interactor, router: router)
    }
}
