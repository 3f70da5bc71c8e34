import NodesDebug

/// How the details tell their parent that the user went back.
protocol WordDetailsListener: AnyObject {
    func wordDetailsDidClose()
}

/// A word's details, pushed from the list: an MVVM screen whose view model tells the view
/// what to show through a callback.
protocol WordDetailsGraph: FeatureGraph {
    var viewController: ViewController { get }
}

protocol WordDetailsBuilder {
    func build(word: String, listener: WordDetailsListener) -> WordDetailsGraph
}

final class WordDetailsBuilderImpl: WordDetailsBuilder {
    private let store: WordStore
    private let injectsLeak: Bool

    init(store: WordStore, injectsLeak: Bool) {
        self.store = store
        self.injectsLeak = injectsLeak
    }

    func build(word: String, listener: WordDetailsListener) -> WordDetailsGraph {
        let viewModel = WordDetailsViewModel(word: word, store: store)
        viewModel.listener = listener
        let view = WordDetailsViewController(viewModel: viewModel, injectsLeak: injectsLeak)
        return WordDetailsGraphImpl(viewController: view, viewModel: viewModel)
    }
}

final class WordDetailsGraphImpl: WordDetailsGraph {
    let viewController: ViewController
    private let viewModel: WordDetailsViewModel

    init(viewController: ViewController, viewModel: WordDetailsViewModel) {
        self.viewController = viewController
        self.viewModel = viewModel
    }

    var parts: [(object: AnyObject, role: ObjectRole)] { [(viewController, .view), (viewModel, "viewModel")] }
}

final class WordDetailsViewModel {
    /// Called with the text to show; the view sets it.
    var onChange: ((String) -> Void)?
    weak var listener: WordDetailsListener?
    private let word: String
    private let store: WordStore

    init(word: String, store: WordStore) {
        self.word = word
        self.store = store
    }

    func load() { onChange?("\(word): \(store.translation(of: word) ?? "?")") }
    func close() { listener?.wordDetailsDidClose() }
}

final class WordDetailsViewController: ViewController {
    private let viewModel: WordDetailsViewModel
    private(set) var text = ""

    init(viewModel: WordDetailsViewModel, injectsLeak: Bool) {
        self.viewModel = viewModel
        super.init(title: "Details")
        // The view keeps its view model, so the view model's callback must not keep the view.
        if injectsLeak {
            // LEAK (--leak retain-cycle): the callback captures `self` strongly: view → view
            // model → callback → view, a cycle that outlives the feature's removal.
            viewModel.onChange = { text in self.text = text }
        } else {
            viewModel.onChange = { [weak self] text in self?.text = text }
        }
        viewModel.load()
    }

    /// The user taps "Back".
    func tapBack() { viewModel.close() }
}
