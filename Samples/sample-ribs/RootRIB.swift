// The Root RIB: shows LoggedOut, then LoggedIn once the rider has logged in.

protocol RootRouting: AnyObject {
    func routeToLoggedIn(userName: String)
}

final class RootViewController: ViewController {}

final class RootInteractor: Interactor, LoggedOutListener {
    weak var router: RootRouting?

    func didLogIn(userName: String) {
        router?.routeToLoggedIn(userName: userName)
    }
}

final class RootRouter: ViewableRouter<RootInteractor, RootViewController>, RootRouting {
    private let loggedOutBuilder: LoggedOutBuilder
    private let loggedInBuilder: LoggedInBuilder
    private var loggedOut: LoggedOutRouter?

    init(
        interactor: RootInteractor, viewController: RootViewController,
        loggedOutBuilder: LoggedOutBuilder, loggedInBuilder: LoggedInBuilder
    ) {
        self.loggedOutBuilder = loggedOutBuilder
        self.loggedInBuilder = loggedInBuilder
        super.init(interactor: interactor, viewController: viewController)
    }

    override func didLoad() {
        let loggedOut = loggedOutBuilder.build(withListener: interactor)
        self.loggedOut = loggedOut
        attachChild(loggedOut)
        viewController.present(loggedOut.viewController)
    }

    func routeToLoggedIn(userName: String) {
        if let loggedOut {
            detachChild(loggedOut)
            viewController.dismiss(loggedOut.viewController)
            self.loggedOut = nil
        }
        attachChild(loggedInBuilder.build(userName: userName))
    }
}

final class RootBuilder {
    private let dependency: AppComponent

    init(dependency: AppComponent) {
        self.dependency = dependency
    }

    func build() -> RootRouter {
        let viewController = RootViewController(title: "Root")
        let interactor = RootInteractor()
        let router = RootRouter(
            interactor: interactor, viewController: viewController,
            loggedOutBuilder: LoggedOutBuilder(),
            loggedInBuilder: LoggedInBuilder(app: dependency, rootViewController: viewController))
        interactor.router = router
        return router
    }
}
