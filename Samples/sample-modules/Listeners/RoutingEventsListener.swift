/// The main routing flow: turns the events that mean "go somewhere" into routing steps.
final class RoutingEventsListener: EventsListener {
    private let router: Router

    init(router: Router) {
        self.router = router
    }

    func listenEvents(from module: Module) {
        module.events.subscribe { [router] event in
            switch event {
            case HomeEvent.categorySelected(let category):
                router.route(to: .productArray(ProductArrayBuildContext(category: category, routingFlow: "main")))
            case ProductArrayEvent.productSelected(let sku):
                router.route(to: .product(ProductBuildContext(sku: sku, routingFlow: "main")))
            case ProductEvent.closed:
                router.back()
            default:
                break
            }
        }
    }
}
