import Glibc
import Nodes
import SampleSupport

// sample-nodes: a small app on the Nodes runtime that runs a scripted navigation, printing its
// node tree as it goes. See README.md.
let specification = SampleOptions.Specification(
    program: "sample-nodes",
    summary: "an app on the Nodes runtime: log in, tabs, a post, a share sheet, log out, log in again",
    leakKinds: [
        (InjectedLeak.retainCycle.rawValue, "the session keeps a closure that captures the Profile tab's context"),
        (InjectedLeak.worker.rawValue, "the Settings tab's worker never invalidates its timer"),
        (InjectedLeak.subscription.rawValue, "a post's Detail keeps its observation in the session, never cancelled"),
        (InjectedLeak.view.rawValue, "the analytics service keeps the Share sheet's view"),
    ],
    valueOptions: [
        ("--nodes", "N", "show N posts as nodes in the feed at the end (for benchmarks)"),
        ("--pace", "MS", "pause this many milliseconds between the script's steps (to watch it live)"),
    ],
    flagOptions: [("--feed-v2", "turn on the feed's v2 experiment (a plugin)")])
let options = SampleOptions.parse(Array(CommandLine.arguments.dropFirst()), specification)
let output = SampleOutput(quiet: options.quiet)
let itemCount = options.positiveInteger("--nodes", specification, maximum: 10_000_000)
let pace = options.positiveInteger("--pace", specification, maximum: 600_000)

/// Pauses between the script's steps when `--pace` asks for it, so that a watcher sees each one.
func pauseBetweenSteps() {
    if let pace { usleep(UInt32(clamping: pace * 1_000)) }
}
let component = AppComponent(
    flags: FeatureFlags(options.flags.contains("--feed-v2") ? ["feed-v2"] : []),
    injectedLeak: options.leak.flatMap(InjectedLeak.init(rawValue:)))

/// The first session: read a post, share it, log out. Every node it detaches should be
/// released; the injected leak, if any, is one of them. A function, so that its locals are gone
/// when it returns: a local that outlived a detach would keep the node alive.
@MainActor func readAndShare(in app: AppFlowImp) {
    app.firstSubFlow(ofType: LoggedOutFlowImp.self)?.loginContext.logIn(as: "ada")
    guard let loggedIn = app.firstSubFlow(ofType: LoggedInFlowImp.self), let feed = loggedIn.feed else { return }
    pauseBetweenSteps()
    component.ticker.tick()
    let detail = feed.openDetail("Post 1")
    detail.context.bookmark()
    pauseBetweenSteps()
    detail.openShare()
    output.showTree("logged in, reading a post, sharing it")
    pauseBetweenSteps()
    detail.closeShare()
    feed.closeDetail(detail)
    pauseBetweenSteps()
    component.ticker.tick()
    loggedIn.logOut()
}

/// The second session, where the app rests (and holds, with --hold).
@MainActor func logInAgain(in app: AppFlowImp) {
    app.firstSubFlow(ofType: LoggedOutFlowImp.self)?.loginContext.logIn(as: "grace")
    guard let itemCount else {
        output.showTree("logged in again")
        return
    }
    app.firstSubFlow(ofType: LoggedInFlowImp.self)?.feed?.showItems(count: itemCount)
    if itemCount <= 100 {
        output.showTree("logged in again, \(itemCount) posts")
    } else {
        output.showCount("logged in again, \(itemCount) posts")
    }
}

/// The scripted navigation.
@MainActor func runScript() {
    let window = HeadlessWindow()
    window.launch(AppBuilder(component: component).build())
    guard let app = window.flow as? AppFlowImp else { return }
    output.showTree("launched")
    pauseBetweenSteps()
    readAndShare(in: app)
    output.showTree("logged out")
    pauseBetweenSteps()
    logInAgain(in: app)
    if let seconds = options.holdSeconds { Hold.run(seconds: seconds, output: output) }
    window.close()
}

CollectorLink.start()
runScript()
let remaining = NodeTracker.shared.snapshot().nodes.count
output.say("== closed: \(remaining) nodes left")
