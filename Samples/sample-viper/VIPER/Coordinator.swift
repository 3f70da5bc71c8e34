import NodesDebug

/// The base of coordinators: each one owns a part of the navigation, starts child coordinators
/// and shows the scenes (modules) that its module builders make.
///
/// This is where the tree meets Nodescope, through the generic tracking API: a coordinator is a
/// node of kind `Coordinator`, and each module it shows is a node of kind `ViperModule` below
/// it, holding the module's presenter, interactor, router and view. Nodescope watches them
/// through weak references and reports any that outlives the module's removal. `launch`,
/// `startChild`, `setRoot` and `push` take their caller's `#filePath` and `#line` and pass them
/// to `tracker.attach`, so a report points at the coordinator's line that started the child or
/// showed the module, not at this file.
class Coordinator {
    let navigationController: NavigationController
    private(set) var children: [Coordinator] = []
    private(set) var nodeID: NodeID?
    /// The modules this coordinator showed, with their nodes. Views weakly: the navigation
    /// stack owns them.
    private var modules: [(view: WeakView, node: NodeID)] = []

    init(navigationController: NavigationController) {
        self.navigationController = navigationController
    }

    /// Shows the coordinator's first scene. Subclasses override it.
    func start() {}

    /// Starts this coordinator as the root of the app.
    final func launch(file: StaticString = #filePath, line: UInt = #line) {
        begin(under: nil, file: file, line: line)
    }

    final func startChild(_ child: Coordinator, file: StaticString = #filePath, line: UInt = #line) {
        children.append(child)
        child.begin(under: nodeID, file: file, line: line)
    }

    final func finishChild(_ child: Coordinator) {
        child.end()
        children.removeAll { $0 === child }
    }

    /// Finishes the child coordinators, removes this coordinator's scenes and reports it gone.
    final func end() {
        for child in children.reversed() { finishChild(child) }
        for module in modules.reversed() {
            if let view = module.view.object { remove(view) }
        }
        guard let id = nodeID else { return }
        NodeTracker.shared.setState(.inactive, of: id)
        NodeTracker.shared.detach(id)
        nodeID = nil
    }

    /// Shows `module` as the only scene of the stack.
    final func setRoot(_ module: ViperModule, file: StaticString = #filePath, line: UInt = #line) {
        navigationController.setRoot(module.view)
        report(module, file: file, line: line)
    }

    /// Pushes `module` on the stack.
    final func push(_ module: ViperModule, file: StaticString = #filePath, line: UInt = #line) {
        navigationController.push(module.view)
        report(module, file: file, line: line)
    }

    /// Takes a scene of this coordinator off the stack and reports its module detached: from
    /// now on, each of its parts must be released.
    final func remove(_ view: ViewController) {
        navigationController.remove(view)
        guard let index = modules.firstIndex(where: { $0.view.object === view }) else { return }
        NodeTracker.shared.detach(modules[index].node)
        modules.remove(at: index)
    }

    private func begin(under parent: NodeID?, file: StaticString, line: UInt) {
        let tracker = NodeTracker.shared
        let id = tracker.attach(
            self, role: .coordinator, parent: parent, kind: .coordinator, name: "\(type(of: self))", file: file,
            line: line)
        tracker.setState(.active, of: id)
        nodeID = id
        start()
    }

    private func report(_ module: ViperModule, file: StaticString, line: UInt) {
        let tracker = NodeTracker.shared
        let id = tracker.attach(
            module.presenter, role: .presenter, parent: nodeID, kind: .viperModule, name: module.name, file: file,
            line: line)
        tracker.watch(module.interactor, role: .interactor, in: id)
        tracker.watch(module.router, role: .router, in: id)
        tracker.watch(module.view, role: .view, in: id)
        tracker.setState(.active, of: id)
        modules.append((WeakView(module.view), id))
    }
}

/// A weak reference to a view, as the seed asks of coordinators.
struct WeakView {
    weak var object: ViewController?
    init(_ object: ViewController) { self.object = object }
}
