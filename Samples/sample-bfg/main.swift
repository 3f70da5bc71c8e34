import NodesDebug
import SampleSupport

// sample-bfg: a personal dictionary in the Builder-Feature-Graph style (builders that make
// feature graphs, a DI graph per feature, a feature tree), reporting its features through
// NodesDebug's generic tracking API. See README.md.
let specification = SampleOptions.Specification(
    program: "sample-bfg",
    summary: "a Builder-Feature-Graph app: add a word, read its details, open the settings",
    leakKinds: [("retain-cycle", "the word details' view model callback captures its view strongly")])
let options = SampleOptions.parse(Array(CommandLine.arguments.dropFirst()), specification)
let output = SampleOutput(quiet: options.quiet)

/// The user's taps. A function, so that no local outlives a feature's removal.
@MainActor func use(_ navigation: NavigationController) {
    navigation.top(MainWordListViewController.self)?.tapAdd()
    output.showTree("adding a word")
    navigation.top(NewWordViewController.self)?.tapAdd("serendipity", translation: "a happy accident")
    navigation.top(MainWordListViewController.self)?.tapWord("serendipity")
    output.showTree("reading a word")
    navigation.top(WordDetailsViewController.self)?.tapBack()
    navigation.top(MainWordListViewController.self)?.tapSettings()
    output.showTree("settings")
}

@MainActor func runScript() {
    let dependencies = AppDependencies(store: WordStore(), injectsLeak: options.leak != nil)
    let app = AppBuilderImpl(dependencies: dependencies).build()
    let node = FeatureTree.attach(app, under: nil)
    output.showTree("launched")
    use(app.rootViewController)
    if let seconds = options.holdSeconds { Hold.run(seconds: seconds, output: output) }
    FeatureTree.detach(node)
}

CollectorLink.start()
runScript()
output.say("== closed: \(NodeTracker.shared.snapshot().nodes.count) nodes left")
