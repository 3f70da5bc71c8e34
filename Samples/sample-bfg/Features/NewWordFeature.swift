import NodesDebug

/// How the new-word feature tells its parent it is done: the parent is its delegate, as the
/// BFG architecture suggests for a child and its parent.
protocol NewWordListener: AnyObject {
    func newWordDidFinish()
}

/// A modal screen to add a word and its translation.
protocol NewWordGraph: FeatureGraph {
    var viewController: ViewController { get }
}

protocol NewWordBuilder {
    func build(listener: NewWordListener) -> NewWordGraph
}

final class NewWordBuilderImpl: NewWordBuilder {
    private let store: WordStore
    init(store: WordStore) { self.store = store }

    func build(listener: NewWordListener) -> NewWordGraph {
        let model = NewWordModel(store: store)
        model.listener = listener
        return NewWordGraphImpl(viewController: NewWordViewController(model: model), model: model)
    }
}

final class NewWordGraphImpl: NewWordGraph {
    let viewController: ViewController
    private let model: NewWordModel

    init(viewController: ViewController, model: NewWordModel) {
        self.viewController = viewController
        self.model = model
    }

    var parts: [(object: AnyObject, role: ObjectRole)] { [(viewController, .view), (model, "model")] }
}

final class NewWordModel {
    weak var listener: NewWordListener?
    private let store: WordStore
    init(store: WordStore) { self.store = store }

    func add(_ word: String, translation: String) {
        store.add(word, translation: translation)
        listener?.newWordDidFinish()
    }
}

final class NewWordViewController: ViewController {
    private let model: NewWordModel
    init(model: NewWordModel) {
        self.model = model
        super.init(title: "New word")
    }

    func tapAdd(_ word: String, translation: String) { model.add(word, translation: translation) }
}
