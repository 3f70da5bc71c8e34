/// The words of the personal dictionary: the domain model that every feature shares, passed
/// down by the builders (no globals, as the BFG architecture asks).
final class WordStore {
    private(set) var words: [String: String] = [:]

    func add(_ word: String, translation: String) { words[word] = translation }
    func translation(of word: String) -> String? { words[word] }
    func search(_ query: String) -> [String] { words.keys.filter { $0.hasPrefix(query) }.sorted() }
}

/// The app's external dependencies, given to the app's builder.
struct AppDependencies {
    let store: WordStore
    /// Whether `--leak retain-cycle` was asked for (see WordDetailsFeature.swift).
    let injectsLeak: Bool
}
