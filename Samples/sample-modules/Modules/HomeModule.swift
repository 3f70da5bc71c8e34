// The home page: a list of categories.

enum HomeEvent: ModuleEvent {
    case categorySelected(String)
}

struct HomeBuildContext: BuildContext {
    let routingFlow: String
}

final class HomeModule: Module {
    private let context: HomeBuildContext
    init(context: HomeBuildContext) { self.context = context }

    override func makeRootViewController() -> ViewController {
        HomeViewController(events: events)
    }
}

final class HomeViewController: ViewController {
    private let events: EventStream
    init(events: EventStream) {
        self.events = events
        super.init(title: "Home")
    }

    func tapCategory(_ category: String) { events.send(HomeEvent.categorySelected(category)) }
}

extension ModuleRoutingStep {
    static func home(_ context: HomeBuildContext) -> ModuleRoutingStep {
        ModuleRoutingStep(maker: ModuleMaker { HomeModule(context: context) })
    }
}
