import NodesDebug

/// What a router can do for its parent: be attached as a child RIB and be detached.
protocol Routing: AnyObject {
    /// Reports the RIB as a node under `parent`, activates its interactor and loads it. `file`
    /// and `line` are the app's line that attached the RIB, reported as the node's attach site
    /// (a requirement cannot default them: ``Router/attachChild(_:file:line:)`` does).
    func attach(under parent: NodeID?, file: StaticString, line: UInt)
    /// Detaches the RIB's children, deactivates its interactor and reports the RIB detached.
    func detach()
}

/// Routes a RIB: it attaches and detaches child RIBs.
///
/// This is the one place where the RIB tree meets Nodescope, through the generic tracking API:
/// each RIB is a node of kind `Router`, named after its router, holding its router, its
/// interactor and, when it has one, its view controller. Nodescope watches those objects through
/// weak references and reports any that outlives the detach of its RIB. `attachChild` and
/// `launch` take their caller's `#filePath` and `#line` and pass them to `tracker.attach`, so a
/// report points at the line of the app that attached the RIB, not at this file.
class Router<InteractorType: Interactor>: Routing {
    let interactor: InteractorType
    private(set) var children: [Routing] = []
    /// The RIB's node while it is attached.
    private(set) var nodeID: NodeID?

    init(interactor: InteractorType) {
        self.interactor = interactor
    }

    /// The view controller reported with the RIB, if it has one.
    var trackedViewController: ViewController? { nil }

    /// Called when the RIB is attached, after its interactor became active: attach the RIB's
    /// first children here.
    func didLoad() {}

    final func attachChild(_ child: Routing, file: StaticString = #filePath, line: UInt = #line) {
        children.append(child)
        child.attach(under: nodeID, file: file, line: line)
    }

    final func detachChild(_ child: Routing) {
        child.detach()
        children.removeAll { $0 === child }
    }

    /// Attaches this router as the root of the tree: how the app launches.
    final func launch(file: StaticString = #filePath, line: UInt = #line) {
        attach(under: nil, file: file, line: line)
    }

    final func attach(under parent: NodeID?, file: StaticString, line: UInt) {
        let tracker = NodeTracker.shared
        let id = tracker.attach(
            self, role: .router, parent: parent, kind: .router, name: "\(type(of: self))", file: file, line: line)
        tracker.watch(interactor, role: .interactor, in: id)
        if let view = trackedViewController { tracker.watch(view, role: .view, in: id) }
        nodeID = id
        interactor.activate()
        tracker.setState(.active, of: id)
        didLoad()
    }

    final func detach() {
        for child in children.reversed() { detachChild(child) }
        guard let id = nodeID else { return }
        interactor.deactivate()
        NodeTracker.shared.setState(.inactive, of: id)
        NodeTracker.shared.detach(id)
        nodeID = nil
    }
}

/// The router of a RIB that has a view controller.
class ViewableRouter<InteractorType: Interactor, ViewControllerType: ViewController>: Router<InteractorType> {
    let viewController: ViewControllerType

    init(interactor: InteractorType, viewController: ViewControllerType) {
        self.viewController = viewController
        super.init(interactor: interactor)
    }

    override var trackedViewController: ViewController? { viewController }
}
