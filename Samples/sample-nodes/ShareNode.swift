import Nodes

/// The share sheet, presented modally over a post's detail.
final class ShareContextImp: AbstractContext<CancellationToken> {}

final class ShareFlowImp: AbstractFlow<ShareContextImp, HeadlessViewController> {
    private let analytics: Analytics
    private let injectedLeak: InjectedLeak?

    init(analytics: Analytics, injectedLeak: InjectedLeak?, context: ShareContextImp, viewController: HeadlessViewController) {
        self.analytics = analytics
        self.injectedLeak = injectedLeak
        super.init(context: context, viewController: viewController)
    }

    override func didStart() {
        if injectedLeak == .view {
            // LEAK (--leak view): the analytics service keeps the view itself, so the view
            // outlives its node.
            analytics.track(screen: viewController)
        } else {
            analytics.track(screenNamed: viewController.title)
        }
    }
}

@MainActor
final class ShareBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(item: String) -> ShareFlowImp {
        ShareFlowImp(
            analytics: component.analytics, injectedLeak: component.injectedLeak,
            context: ShareContextImp(workers: []), viewController: HeadlessViewController(title: "Share \(item)"))
    }
}
