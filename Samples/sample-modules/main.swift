import NodesDebug
import SampleSupport

// sample-modules: a shop in the event-based module style (modules built from build contexts,
// events listeners, a module manager with a weak table), reporting its modules through
// NodesDebug's generic tracking API. See README.md.
let specification = SampleOptions.Specification(
    program: "sample-modules",
    summary: "an event-based modular app: a category, a product, back, another product",
    leakKinds: [("retain-cycle", "the analytics listener's handler captures the module it listens to")])
let options = SampleOptions.parse(Array(CommandLine.arguments.dropFirst()), specification)
let output = SampleOutput(quiet: options.quiet)

/// The shopper's taps. A function, so that no local outlives a view controller.
@MainActor func shop(_ navigation: NavigationController, manager: ModuleManager) {
    navigation.top(HomeViewController.self)?.tapCategory("shoes")
    navigation.top(ProductArrayViewController.self)?.tapProduct("sku-1")
    output.showTree("browsing a product")
    navigation.top(ProductViewController.self)?.tapAddToBag()
    navigation.top(ProductViewController.self)?.tapBack()
    output.showTree("back on the list: the product's view is gone; the manager drops its module at its next use")
    navigation.top(ProductArrayViewController.self)?.tapProduct("sku-2")
    output.showTree("browsing another product: the manager let the first product's module go")
}

@MainActor func runScript() {
    let navigation = NavigationController()
    let manager = ModuleManager()
    let router = Router(navigationController: navigation, factory: manager)
    manager.addEventsListener(AnalyticsEventsListener(injectsLeak: options.leak != nil))
    manager.addEventsListener(RoutingEventsListener(router: router))
    router.route(to: .home(HomeBuildContext(routingFlow: "launch")))
    output.showTree("launched")
    shop(navigation, manager: manager)
    if let seconds = options.holdSeconds { Hold.run(seconds: seconds, output: output) }
    navigation.removeAll()
    manager.purge()
}

CollectorLink.start()
runScript()
output.say("== closed: \(NodeTracker.shared.snapshot().nodes.count) nodes left")
