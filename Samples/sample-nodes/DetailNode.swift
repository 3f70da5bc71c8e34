import Nodes

/// A post's detail screen, which can present a share sheet.
final class DetailContextImp: AbstractContext<AnyCancellable> {
    let item: String
    init(item: String) {
        self.item = item
        super.init(workers: [])
    }
}

final class DetailFlowImp: AbstractFlow<DetailContextImp, HeadlessViewController> {
    func openShare() {
        let share = ShareFlowImp(
            context: ShareContextImp(workers: []), viewController: HeadlessViewController(title: "Share"))
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

final class DetailBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(item: String) -> DetailFlowImp {
        DetailFlowImp(context: DetailContextImp(item: item), viewController: HeadlessViewController(title: item))
    }
}

final class ShareContextImp: AbstractContext<AnyCancellable> {}
final class ShareFlowImp: AbstractFlow<ShareContextImp, HeadlessViewController> {}
