import Nodes

// Attaches one node per leak way under a root, detaches them all, and exits with the root still
// attached. Under `nodescope check`, every way is a leak whose holder the report names.

let window = HeadlessWindow()
let root = WaysFlow()
window.launch(root)

/// 5. The global that keeps a detached node's flow.
let leftover = WayFlow(GlobalContext(workers: []), title: "Global")

/// Attaches and detaches the nodes of ways 1–4 and 6 (a function, so that no local outlives it).
@MainActor
func runWays() {
    let closure = ClosureContext(workers: [])
    closure.root = root.context
    let dictionary = DictionaryContext(workers: [])
    dictionary.root = root.context
    let flows: [Flow] = [
        WayFlow(CycleContext(workers: []), title: "Cycle"),
        WayFlow(closure, title: "Closure"),
        WayFlow(dictionary, title: "Dictionary"),
        WayFlow(SingletonContext(workers: []), title: "Singleton"),
        WayFlow(StackContext(workers: []), title: "Stack"),
    ]
    for flow in flows { root.attach(starting: flow) }
    for flow in flows { root.detach(ending: flow) }
}

runWays()
root.attach(starting: leftover)
root.detach(ending: leftover)
