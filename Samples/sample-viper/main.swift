import NodesDebug
import SampleSupport

// sample-viper: an app in the VIPER-with-coordinators style (coordinators, and scenes of view,
// interactor, presenter and router built by module builders), reporting its tree through
// NodesDebug's generic tracking API. See README.md.
let specification = SampleOptions.Specification(
    program: "sample-viper",
    summary: "a VIPER app with coordinators: log in, home, profile, edit the profile",
    leakKinds: [("retain-cycle", "the profile edit presenter holds its view strongly: view → presenter → view")])
let options = SampleOptions.parse(Array(CommandLine.arguments.dropFirst()), specification)
let output = SampleOutput(quiet: options.quiet)

/// The user's taps. A function, so that no local outlives a scene's removal.
@MainActor func use(_ navigation: NavigationController) {
    navigation.top(LoginViewController.self)?.tapLogIn(name: "ada")
    output.showTree("logged in: home")
    navigation.top(HomeViewController.self)?.tapProfile()
    navigation.top(ProfileDisplayViewController.self)?.tapEdit()
    output.showTree("editing the profile")
    navigation.top(ProfileEditViewController.self)?.tapSave(name: "Ada Lovelace")
    output.showTree("profile saved")
}

@MainActor func runScript() {
    let navigation = NavigationController()
    let app = AppCoordinator(
        navigationController: navigation, dependencies: AppDependencies(injectsLeak: options.leak != nil))
    app.launch()
    output.showTree("launched")
    use(navigation)
    if let seconds = options.holdSeconds { Hold.run(seconds: seconds, output: output) }
    app.end()
}

CollectorLink.start()
runScript()
output.say("== closed: \(NodeTracker.shared.snapshot().nodes.count) nodes left")
