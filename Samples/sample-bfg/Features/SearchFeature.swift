import NodesDebug

/// The search field embedded in the main screen, with its results.
protocol SearchGraph: FeatureGraph {
    var model: SearchModel { get }
}

protocol SearchBuilder {
    func build() -> SearchGraph
}

final class SearchBuilderImpl: SearchBuilder {
    private let store: WordStore
    init(store: WordStore) { self.store = store }

    func build() -> SearchGraph {
        let model = SearchModel(store: store)
        return SearchGraphImpl(model: model, view: SearchViewController(model: model))
    }
}

final class SearchGraphImpl: SearchGraph {
    let model: SearchModel
    private let view: SearchViewController

    init(model: SearchModel, view: SearchViewController) {
        self.model = model
        self.view = view
    }

    var parts: [(object: AnyObject, role: ObjectRole)] { [(view, .view), (model, "model")] }
}

final class SearchModel {
    private let store: WordStore
    private(set) var results: [String] = []
    init(store: WordStore) { self.store = store }
    func search(_ query: String) { results = store.search(query) }
}

final class SearchViewController: ViewController {
    private let model: SearchModel
    init(model: SearchModel) {
        self.model = model
        super.init(title: "Search")
    }
}
