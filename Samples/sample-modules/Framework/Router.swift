/// Turns routing steps into navigation. It reaches modules only through a
/// ``ViewControllerFactory`` (the module manager): routers do not know that modules exist.
final class Router {
    let navigationController: NavigationController
    private let factory: ViewControllerFactory

    init(navigationController: NavigationController, factory: ViewControllerFactory) {
        self.navigationController = navigationController
        self.factory = factory
    }

    func route(to step: ModuleRoutingStep) {
        let viewController = factory.viewController(for: step, from: navigationController.topViewController)
        navigationController.push(viewController)
    }

    func back() {
        navigationController.pop()
    }
}
