import Nodes

// sample-nodes: a small app on the Nodes runtime that runs a scripted navigation, printing its
// node tree as it goes. Usage: sample-nodes [--feed-v2] [--quiet]
let arguments = CommandLine.arguments.dropFirst()
let quiet = arguments.contains("--quiet")
let flags = FeatureFlags(arguments.contains("--feed-v2") ? ["feed-v2"] : [])

@MainActor func show(_ step: String) {
    guard !quiet else { return }
    print("== \(step)")
    print(NodeTracker.shared.snapshot().renderedText())
}

/// The scripted navigation. Locals, not top-level globals, so that nodes can be released.
@MainActor func runScript() {
    let window = HeadlessWindow()
    let app = AppBuilder(component: AppComponent(flags: flags)).build()
    window.launch(app)
    show("launched")

    app.firstSubFlow(ofType: LoggedOutFlowImp.self)?.loginContext.logIn(as: "ada")
    if let feed = app.firstSubFlow(ofType: LoggedInFlowImp.self)?.feed {
        let detail = feed.openDetail("Post 1")
        detail.openShare()
        show("logged in, reading a post, sharing it")
        detail.closeShare()
        feed.closeDetail(detail)
    }
    app.firstSubFlow(ofType: LoggedInFlowImp.self)?.logOut()
    show("logged out")
    window.close()
}

NodeTracker.shared.startRecording()
runScript()
let remaining = NodeTracker.shared.snapshot().nodes.count
if !quiet { print("== closed: \(remaining) nodes left") }
