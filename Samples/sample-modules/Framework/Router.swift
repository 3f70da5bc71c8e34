/// Turns routing steps into navigation. It reaches modules only through a
/// ``ViewControllerFactory`` (the module manager): routers do not know that modules exist.
final class Router {
    let navigationController: NavigationController
    private let factory: ViewControllerFactory

    init(navigationController: NavigationController, factory: ViewControllerFactory) {
        self.navigationController = navigationController
        self.factory = factory
    }

    /// Builds the module of `step` and pushes its view controller. The module's attach site is
    /// the caller's line.
    func route(to step: ModuleRoutingStep, file: StaticString = #filePath, line: UInt = #line) {
        let viewController = factory.viewController(
            for: step, from: navigationController.topViewController, file: file, line: line)
        navigationController.push(viewController)
    }

    func back() {
        navigationController.pop()
    }
}
