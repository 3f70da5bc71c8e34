import NodesDebug

/// The main screen: the list of words, with a search field (an embedded feature), a "+" that
/// presents the new-word feature, and a tap on a word that pushes its details.
protocol MainWordListGraph: FeatureGraph {
    var viewController: ViewController { get }
}

protocol MainWordListBuilder {
    func build() -> MainWordListGraph
}

final class MainWordListBuilderImpl: MainWordListBuilder {
    private let store: WordStore
    private let navigationController: NavigationController
    private let injectsLeak: Bool

    init(store: WordStore, navigationController: NavigationController, injectsLeak: Bool) {
        self.store = store
        self.navigationController = navigationController
        self.injectsLeak = injectsLeak
    }

    func build() -> MainWordListGraph {
        // The child features' builders are made here, by the parent's builder, which chooses
        // their implementations and passes them their dependencies.
        let router = MainWordListRouter(
            navigationController: navigationController,
            searchBuilder: SearchBuilderImpl(store: store),
            newWordBuilder: NewWordBuilderImpl(store: store),
            wordDetailsBuilder: WordDetailsBuilderImpl(store: store, injectsLeak: injectsLeak),
            settingsBuilder: SettingsScreenBuilder())
        let model = MainWordListModel(store: store)
        let view = MainWordListViewController(model: model, router: router)
        router.listView = view
        return MainWordListGraphImpl(viewController: view, model: model, router: router)
    }
}

final class MainWordListGraphImpl: MainWordListGraph {
    let viewController: ViewController
    private let model: MainWordListModel
    private let router: MainWordListRouter

    init(viewController: ViewController, model: MainWordListModel, router: MainWordListRouter) {
        self.viewController = viewController
        self.model = model
        self.router = router
    }

    var parts: [(object: AnyObject, role: ObjectRole)] { [(viewController, .view), (model, "model"), (router, .router)] }

    func didAttach(as node: NodeID) {
        router.node = node
        router.showSearch()
    }
}

final class MainWordListModel {
    private let store: WordStore
    init(store: WordStore) { self.store = store }
    var words: [String] { store.search("") }
}

final class MainWordListViewController: ViewController {
    private let model: MainWordListModel
    private let router: MainWordListRouter
    private(set) var rows: [String] = []

    init(model: MainWordListModel, router: MainWordListRouter) {
        self.model = model
        self.router = router
        super.init(title: "Words")
    }

    func reload() { rows = model.words }
    func tapAdd() { router.showNewWord() }
    func tapWord(_ word: String) { router.showDetails(of: word) }
    func tapSettings() { router.showSettings() }
}
