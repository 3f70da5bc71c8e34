import Nodes

/// A post's detail screen: it shows whether the post is bookmarked and can present a share sheet.
final class DetailContextImp: AbstractContext<CancellationToken> {
    let item: String
    private let feedState: ObservableState<FeedState>
    private let session: Session
    private let injectedLeak: InjectedLeak?
    private(set) var isBookmarked = false

    init(item: String, feedState: ObservableState<FeedState>, session: Session, injectedLeak: InjectedLeak?) {
        self.item = item
        self.feedState = feedState
        self.session = session
        self.injectedLeak = injectedLeak
        super.init(workers: [])
    }

    override func didBecomeActive() {
        // Capturing `self` is fine here: deactivation cancels what is in `cancellables`.
        let observation = feedState.observe { [self] state in isBookmarked = state.bookmarked.contains(item) }
        if injectedLeak == .subscription {
            // LEAK (--leak subscription): stored in the session, the observation is never
            // cancelled, so the feed state keeps its closure and the closure keeps `self`.
            observation.store(in: &session.cancellables)
        } else {
            observation.store(in: &cancellables)
        }
    }

    func bookmark() {
        feedState.mutate { $0.bookmarked.insert(item) }
    }
}

final class DetailFlowImp: AbstractFlow<DetailContextImp, HeadlessViewController> {
    private let component: AppComponent

    init(component: AppComponent, context: DetailContextImp, viewController: HeadlessViewController) {
        self.component = component
        super.init(context: context, viewController: viewController)
    }

    func openShare() {
        let share = ShareBuilder(component: component).build(item: context.item)
        viewController.present(share.getViewController(), withModalStyle: .sheet, animated: true)
        attach(starting: share)
    }

    func closeShare() {
        for share in subFlows(ofType: ShareFlowImp.self) {
            detach(ending: share)
            viewController.dismiss(share.getViewController(), animated: true)
        }
    }
}

@MainActor
final class DetailBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(item: String) -> DetailFlowImp {
        let context = DetailContextImp(
            item: item, feedState: component.feedState, session: component.session,
            injectedLeak: component.injectedLeak)
        return DetailFlowImp(component: component, context: context, viewController: HeadlessViewController(title: item))
    }
}
