// The LoggedOut RIB: a login screen that tells its listener (the Root interactor) who logged in.

protocol LoggedOutListener: AnyObject {
    func didLogIn(userName: String)
}

protocol LoggedOutPresentableListener: AnyObject {
    func logIn(userName: String)
}

final class LoggedOutViewController: ViewController {
    weak var listener: LoggedOutPresentableListener?

    /// The rider taps "Log in".
    func tapLogIn(userName: String) {
        listener?.logIn(userName: userName)
    }
}

final class LoggedOutInteractor: Interactor, LoggedOutPresentableListener {
    weak var listener: LoggedOutListener?

    func logIn(userName: String) {
        listener?.didLogIn(userName: userName)
    }
}

final class LoggedOutRouter: ViewableRouter<LoggedOutInteractor, LoggedOutViewController> {}

final class LoggedOutBuilder {
    func build(withListener listener: LoggedOutListener) -> LoggedOutRouter {
        let viewController = LoggedOutViewController(title: "Log in")
        let interactor = LoggedOutInteractor()
        interactor.listener = listener
        viewController.listener = interactor
        return LoggedOutRouter(interactor: interactor, viewController: viewController)
    }
}
