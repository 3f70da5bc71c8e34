import NodesDebug

/// What routers see of the module manager: view controllers, never modules.
protocol ViewControllerFactory: AnyObject {
    /// The view controller of a module built for `step`. `file` and `line` are the app's line
    /// that asked for it (``Router/route(to:file:line:)`` passes its caller's), reported as the
    /// module's attach site.
    func viewController(
        for step: ModuleRoutingStep, from presenter: ViewController?, file: StaticString, line: UInt
    ) -> ViewController
}

/// What reacts to module events: analytics, routing … The manager subscribes every registered
/// listener to each module it builds.
protocol EventsListener: AnyObject {
    func listenEvents(from module: Module)
}

/// Tracks living modules: a table with a weak key (the module's view controller) and a strong
/// value (the module), so that a module lives exactly as long as its view controller is used.
/// Dead entries are dropped at the next use of the table.
///
/// This is where the module tree meets Nodescope, through the generic tracking API: each
/// module is a node of kind `Module` under the module that presented it, holding the module
/// and its view controller. When the manager lets a module go, the node is detached, and
/// Nodescope reports the module if it is still alive after the grace. The attach site it reports
/// is the app's line that routed to the module (see ``Router/route(to:file:line:)``), not this
/// file.
final class ModuleManager: ViewControllerFactory {
    private struct Entry {
        weak var viewController: ViewController?
        let module: Module
        let node: NodeID
    }

    private var entries: [Entry] = []
    private var listeners: [EventsListener] = []

    func addEventsListener(_ listener: EventsListener) {
        listeners.append(listener)
    }

    /// How many modules are alive in the table.
    var livingModules: Int {
        purge()
        return entries.count
    }

    func viewController(
        for step: ModuleRoutingStep, from presenter: ViewController?, file: StaticString, line: UInt
    ) -> ViewController {
        purge()
        let module = step.maker.make()
        let viewController = module.prepareRootViewController()
        let parent = entries.first { $0.viewController != nil && $0.viewController === presenter }?.node
        let tracker = NodeTracker.shared
        let node = tracker.attach(
            module, role: .module, parent: parent, kind: .module, name: module.name, file: file, line: line)
        tracker.watch(viewController, role: .view, in: node)
        tracker.setState(.active, of: node)
        entries.append(Entry(viewController: viewController, module: module, node: node))
        for listener in listeners { listener.listenEvents(from: module) }
        return viewController
    }

    /// Drops the modules whose view controller is gone, and reports them detached.
    func purge() {
        let dead = entries.filter { $0.viewController == nil }.map(\.node)
        guard !dead.isEmpty else { return }
        entries.removeAll { $0.viewController == nil }
        for node in dead { NodeTracker.shared.detach(node) }
    }
}
