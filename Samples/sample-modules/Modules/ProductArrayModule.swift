// The product array: the products of a category.

enum ProductArrayEvent: ModuleEvent {
    case productSelected(String)
}

struct ProductArrayBuildContext: BuildContext {
    let category: String
    let routingFlow: String
}

final class ProductArrayModule: Module {
    private let context: ProductArrayBuildContext
    init(context: ProductArrayBuildContext) { self.context = context }

    override func makeRootViewController() -> ViewController {
        ProductArrayViewController(category: context.category, events: events)
    }
}

final class ProductArrayViewController: ViewController {
    private let events: EventStream
    init(category: String, events: EventStream) {
        self.events = events
        super.init(title: category)
    }

    func tapProduct(_ sku: String) { events.send(ProductArrayEvent.productSelected(sku)) }
}

extension ModuleRoutingStep {
    static func productArray(_ context: ProductArrayBuildContext) -> ModuleRoutingStep {
        ModuleRoutingStep(maker: ModuleMaker { ProductArrayModule(context: context) })
    }
}
