import Nodes

/// A section of the feed, with a node per post: what `--nodes N` attaches to grow the tree.
final class FeedSectionContextImp: AbstractContext<CancellationToken> {}

final class FeedSectionFlowImp: AbstractFlow<FeedSectionContextImp, HeadlessViewController> {
    private let items: ClosedRange<Int>

    init(items: ClosedRange<Int>) {
        self.items = items
        super.init(context: FeedSectionContextImp(workers: []), viewController: HeadlessViewController(title: "Posts \(items)"))
    }

    override func didStart() {
        for number in items {
            let item = FeedItemFlowImp(
                context: FeedItemContextImp(workers: []), viewController: HeadlessViewController(title: "Post \(number)"))
            viewController.contain(item.getViewController())
            attach(starting: item)
        }
    }
}

/// One post of the feed.
final class FeedItemContextImp: AbstractContext<CancellationToken> {}
final class FeedItemFlowImp: AbstractFlow<FeedItemContextImp, HeadlessViewController> {}

@MainActor
final class FeedSectionBuilder {
    /// The most posts in one section.
    static let capacity = 50

    func build(items: ClosedRange<Int>) -> FeedSectionFlowImp {
        FeedSectionFlowImp(items: items)
    }
}
