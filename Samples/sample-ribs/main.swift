import NodesDebug
import SampleSupport

// sample-ribs: a ride-sharing app in the RIBs style (Router, Interactor, Builder, optional view
// controller per RIB), reporting its RIB tree through NodesDebug's generic tracking API. See
// README.md.
let specification = SampleOptions.Specification(
    program: "sample-ribs",
    summary: "a RIBs app: log in, request a ride, ride, request again",
    leakKinds: [("retain-cycle", "the first Request interactor never disposes its profile subscription")])
let options = SampleOptions.parse(Array(CommandLine.arguments.dropFirst()), specification)
let output = SampleOutput(quiet: options.quiet)

/// The rider's session, tap by tap. A function, so that no local outlives a detach.
@MainActor func ride(with root: RootRouter) {
    root.viewController.find(LoggedOutViewController.self)?.tapLogIn(userName: "ada")
    output.showTree("logged in: requesting a ride")
    root.viewController.find(RequestViewController.self)?.tapRequestRide(to: "Airport")
    output.showTree("on a trip")
    root.viewController.find(OnTripViewController.self)?.tapRate(4.9)
    output.showTree("trip over: requesting again")
}

@MainActor func runScript() {
    let root = RootBuilder(dependency: AppComponent(injectsLeak: options.leak != nil)).build()
    root.launch()
    output.showTree("launched")
    ride(with: root)
    if let seconds = options.holdSeconds { Hold.run(seconds: seconds, output: output) }
    root.detach()
}

CollectorLink.start()
runScript()
output.say("== closed: \(NodeTracker.shared.snapshot().nodes.count) nodes left")
