import Nodes

/// Fetches the stories ahead of time while the row is on screen.
final class StoriesPrefetchWorker: AbstractWorker<CancellationToken> {}

/// The stories row at the top of the feed: what the v2 arm of the feed's A/B test adds.
final class StoriesContextImp: AbstractContext<CancellationToken> {
    init() { super.init(workers: [StoriesPrefetchWorker()]) }
}

final class StoriesFlowImp: AbstractFlow<StoriesContextImp, HeadlessViewController> {}

@MainActor
final class StoriesBuilder {
    func build() -> StoriesFlowImp {
        StoriesFlowImp(context: StoriesContextImp(), viewController: HeadlessViewController(title: "Stories"))
    }
}
