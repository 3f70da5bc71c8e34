import Nodes

@MainActor
protocol LoggedOutListener: AnyObject {
    func didLogIn(user: String)
}

protocol LoggedOutFlow: ViewControllableFlow {
    var loginContext: LoggedOutContextImp { get }
}

/// The login screen: a context that logs in through the session and tells its listener.
final class LoggedOutContextImp: AbstractContext<CancellationToken> {
    weak var listener: LoggedOutListener?
    private let session: Session

    init(session: Session) {
        self.session = session
        super.init(workers: [])
    }

    func logIn(as user: String) {
        session.logIn(as: user)
        listener?.didLogIn(user: user)
    }
}

final class LoggedOutFlowImp: AbstractFlow<LoggedOutContextImp, HeadlessViewController>, LoggedOutFlow {
    var loginContext: LoggedOutContextImp { context }
}

@MainActor
final class LoggedOutBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(listener: LoggedOutListener) -> LoggedOutFlowImp {
        let context = LoggedOutContextImp(session: component.session)
        context.listener = listener
        return LoggedOutFlowImp(context: context, viewController: HeadlessViewController(title: "Login"))
    }
}
