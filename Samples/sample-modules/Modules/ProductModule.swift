// The product detail page (PDP): add to bag, or go back.

enum ProductEvent: ModuleEvent {
    case addedToBag(String)
    case closed
}

struct ProductBuildContext: BuildContext {
    let sku: String
    let routingFlow: String
}

/// The PDP's view model: the view's logic, wired by the module to the module's events.
final class ProductViewModel {
    let sku: String
    private let events: EventStream
    init(sku: String, events: EventStream) {
        self.sku = sku
        self.events = events
    }

    func addToBag() { events.send(ProductEvent.addedToBag(sku)) }
    func close() { events.send(ProductEvent.closed) }
}

final class ProductModule: Module {
    private let context: ProductBuildContext
    init(context: ProductBuildContext) { self.context = context }

    override func makeRootViewController() -> ViewController {
        ProductViewController(viewModel: ProductViewModel(sku: context.sku, events: events))
    }
}

final class ProductViewController: ViewController {
    private let viewModel: ProductViewModel
    init(viewModel: ProductViewModel) {
        self.viewModel = viewModel
        super.init(title: viewModel.sku)
    }

    func tapAddToBag() { viewModel.addToBag() }
    func tapBack() { viewModel.close() }
}

extension ModuleRoutingStep {
    static func product(_ context: ProductBuildContext) -> ModuleRoutingStep {
        ModuleRoutingStep(maker: ModuleMaker { ProductModule(context: context) })
    }
}
