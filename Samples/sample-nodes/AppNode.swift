import Nodes

/// The root node: shows the logged-out node, then the logged-in node after a login.
protocol AppFlow: ViewControllableFlow {
    func routeToLoggedIn(user: String)
    func routeToLoggedOut()
}

final class AppContextImp: AbstractContext<CancellationToken>, LoggedOutListener, LoggedInListener {
    weak var flow: AppFlow?

    func didLogIn(user: String) { flow?.routeToLoggedIn(user: user) }
    func didLogOut() { flow?.routeToLoggedOut() }
}

final class AppFlowImp: AbstractFlow<AppContextImp, HeadlessViewController>, AppFlow {
    private let component: AppComponent

    init(component: AppComponent, context: AppContextImp) {
        self.component = component
        super.init(context: context, viewController: HeadlessViewController(title: "App"))
    }

    override func didStart() { routeToLoggedOut() }

    func routeToLoggedOut() {
        for flow in subFlows(ofType: LoggedInFlow.self) {
            detach(ending: flow)
            viewController.uncontain(flow.getViewController())
        }
        let loggedOut = LoggedOutBuilder(component: component).build(listener: context)
        viewController.present(loggedOut.getViewController(), withModalStyle: .cover, animated: false)
        attach(starting: loggedOut)
    }

    func routeToLoggedIn(user: String) {
        for flow in subFlows(ofType: LoggedOutFlow.self) {
            detach(ending: flow)
            viewController.dismiss(flow.getViewController(), animated: true)
        }
        let loggedIn = LoggedInBuilder(component: component).build(user: user, listener: context)
        viewController.contain(loggedIn.getViewController())
        attach(starting: loggedIn)
    }
}

@MainActor
final class AppBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build() -> AppFlowImp {
        let context = AppContextImp(workers: [])
        let flow = AppFlowImp(component: component, context: context)
        context.flow = flow
        return flow
    }
}
