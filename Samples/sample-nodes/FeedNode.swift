import Nodes

/// Loads items into the shared feed state while the feed is active.
final class FeedRefreshWorker: AbstractWorker<CancellationToken> {
    private let state: ObservableState<FeedState>
    init(state: ObservableState<FeedState>) {
        self.state = state
        super.init()
    }

    override func didStart() {
        state.mutate { $0.items = (1...3).map { "Post \($0)" } }
    }
}

/// The feed's view: a navigation stack whose root shows the feed's view state.
final class FeedViewController: HeadlessNavigationController, WithViewState {
    private(set) var viewState: String?
    func update(with state: String) { viewState = state }
}

final class FeedContextImp: AbstractPresentableContext<CancellationToken, FeedViewController> {
    let state: ObservableState<FeedState>

    init(presentable: FeedViewController, state: ObservableState<FeedState>) {
        self.state = state
        super.init(presentable: presentable, workers: [FeedRefreshWorker(state: state)])
    }

    override func didBecomeActive() {
        state.observe(transform: ClosureTransform { "\($0.items.count) posts" }, observer: presentable)
            .store(in: &cancellables)
    }
}

final class FeedFlowImp: AbstractFlow<FeedContextImp, FeedViewController> {
    private let component: AppComponent
    let variant: String

    init(component: AppComponent, variant: String, context: FeedContextImp) {
        self.component = component
        self.variant = variant
        super.init(context: context, viewController: context.presentable)
    }

    /// The v2 arm shows a stories row above the posts: a node of its own.
    override func didStart() {
        guard variant == "v2" else { return }
        let stories = StoriesBuilder().build()
        viewController.contain(stories.getViewController())
        attach(starting: stories)
    }

    /// Pushes a detail screen for a post.
    @discardableResult
    func openDetail(_ item: String) -> DetailFlowImp {
        let detail = DetailBuilder(component: component).build(item: item)
        viewController.push(detail.getViewController(), animated: true)
        attach(starting: detail)
        return detail
    }

    /// Pops a detail screen.
    func closeDetail(_ detail: DetailFlowImp) {
        detach(ending: detail)
        viewController.pop(detail.getViewController(), animated: true)
    }

    /// Shows `count` posts, each a node, in sections of ``FeedSectionBuilder/capacity``: how
    /// `--nodes N` grows the tree for benchmarks.
    func showItems(count: Int) {
        let builder = FeedSectionBuilder()
        var first = 1
        while first <= count {
            let last = min(first + FeedSectionBuilder.capacity - 1, count)
            let section = builder.build(items: first...last)
            viewController.contain(section.getViewController())
            attach(starting: section)
            first = last + 1
        }
    }
}

/// Builds the feed; the variant names the experiment arm.
@MainActor
final class FeedBuilder {
    let component: AppComponent
    let variant: String
    init(component: AppComponent, variant: String) {
        self.component = component
        self.variant = variant
    }

    func build() -> FeedFlowImp {
        let view = FeedViewController(title: variant == "classic" ? "Feed" : "Feed (\(variant))")
        let context = FeedContextImp(presentable: view, state: component.feedState)
        return FeedFlowImp(component: component, variant: variant, context: context)
    }
}

/// The A/B test of the feed: the "v2" arm (with a stories row, ``StoriesFlowImp``) when its flag
/// is on, else the classic default.
final class FeedPluginList: PluginListWithDefault<String, AppComponent, FeedFlowImp, String> {
    private let component: AppComponent
    init(component: AppComponent) {
        self.component = component
        super.init(componentFactory: { component })
    }

    override func plugins(component: AppComponent) -> KeyValuePairs<String, AnyPlugin> {
        ["v2": AnyPlugin(create: { user in FeedV2Plugin(component: component).create(state: user) })]
    }

    override func `default`(component: AppComponent) -> (key: String, instance: FeedFlowImp) {
        (key: "classic", instance: FeedBuilder(component: component, variant: "classic").build())
    }
}

final class FeedV2Plugin: Plugin<AppComponent, FeedFlowImp, String> {
    init(component: AppComponent) { super.init(componentFactory: { component }) }

    override func isEnabled(component: AppComponent, state user: String) -> Bool {
        component.flags.enabled.contains("feed-v2")
    }

    override func build(component: AppComponent) -> FeedFlowImp {
        FeedBuilder(component: component, variant: "v2").build()
    }
}
