import Nodes

@MainActor
protocol LoggedInListener: AnyObject {
    func didLogOut()
}

protocol LoggedInFlow: ViewControllableFlow {
    var feed: FeedFlowImp? { get }
    func logOut()
}

/// Keeps the session fresh while the user is logged in.
final class SessionWorker: AbstractWorker<CancellationToken> {}

final class LoggedInContextImp: AbstractContext<CancellationToken> {
    weak var listener: LoggedInListener?
    let session: Session

    init(session: Session) {
        self.session = session
        super.init(workers: [SessionWorker()])
    }

    func logOut() {
        session.logOut()
        listener?.didLogOut()
    }
}

/// Tabs: the feed (an A/B plugin list with a default), the profile and the settings.
final class LoggedInFlowImp: AbstractFlow<LoggedInContextImp, HeadlessTabBarController>, LoggedInFlow {
    private let component: AppComponent
    private let user: String

    init(component: AppComponent, user: String, context: LoggedInContextImp) {
        self.component = component
        self.user = user
        super.init(context: context, viewController: HeadlessTabBarController(title: "Tabs"))
    }

    var feed: FeedFlowImp? { firstSubFlow(ofType: FeedFlowImp.self) }

    override func didStart() {
        let feed = FeedPluginList(component: component).create(state: user)
        let tabs: [ViewControllableFlow] = [
            feed,
            ProfileBuilder(component: component).build(user: user),
            SettingsBuilder(component: component).build(),
        ]
        viewController.setViewControllers(tabs.map { $0.getViewController() }, animated: false)
        for tab in tabs { attach(starting: tab) }
    }

    func logOut() { context.logOut() }
}

@MainActor
final class LoggedInBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(user: String, listener: LoggedInListener) -> LoggedInFlowImp {
        let context = LoggedInContextImp(session: component.session)
        context.listener = listener
        return LoggedInFlowImp(component: component, user: user, context: context)
    }
}
