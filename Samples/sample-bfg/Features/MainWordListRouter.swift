import NodesDebug

/// Shows the main screen's child features: builds each with its builder, puts its view on
/// screen, reports it in the feature tree, and takes it all down again.
final class MainWordListRouter: NewWordListener, WordDetailsListener {
    /// The main screen's feature node, set when it is attached.
    var node: NodeID?
    weak var listView: MainWordListViewController?
    /// Weakly: the stack keeps the list's view, which keeps this router.
    private weak var navigationController: NavigationController?
    private let searchBuilder: SearchBuilder
    private let newWordBuilder: NewWordBuilder
    private let wordDetailsBuilder: WordDetailsBuilder
    private let settingsBuilder: ViewControllerBuilder
    /// The child features on screen, with their nodes.
    private var search: (graph: SearchGraph, node: NodeID)?
    private var newWord: (graph: NewWordGraph, node: NodeID)?
    private var details: (graph: WordDetailsGraph, node: NodeID)?
    private var settings: (view: ViewController, node: NodeID)?

    init(
        navigationController: NavigationController, searchBuilder: SearchBuilder, newWordBuilder: NewWordBuilder,
        wordDetailsBuilder: WordDetailsBuilder, settingsBuilder: ViewControllerBuilder
    ) {
        self.navigationController = navigationController
        self.searchBuilder = searchBuilder
        self.newWordBuilder = newWordBuilder
        self.wordDetailsBuilder = wordDetailsBuilder
        self.settingsBuilder = settingsBuilder
    }

    func showSearch() {
        let graph = searchBuilder.build()
        search = (graph, FeatureTree.attach(graph, under: node))
    }

    func showNewWord() {
        let graph = newWordBuilder.build(listener: self)
        listView?.present(graph.viewController)
        newWord = (graph, FeatureTree.attach(graph, under: node))
    }

    func newWordDidFinish() {
        guard let newWord else { return }
        listView?.dismiss()
        listView?.reload()
        self.newWord = nil
        FeatureTree.detach(newWord.node)
    }

    func showDetails(of word: String) {
        let graph = wordDetailsBuilder.build(word: word, listener: self)
        navigationController?.push(graph.viewController)
        details = (graph, FeatureTree.attach(graph, under: node))
    }

    func wordDetailsDidClose() {
        guard let details else { return }
        navigationController?.pop()
        self.details = nil
        FeatureTree.detach(details.node)
    }

    /// Settings is a single screen: its builder makes a view, with no graph around it.
    func showSettings() {
        let view = settingsBuilder.build()
        navigationController?.push(view)
        settings = (view, FeatureTree.attach(screen: view, name: "SettingsScreen", under: node))
    }
}
