/// A node's router: it attaches and detaches child flows, which starts and ends their nodes.
@preconcurrency @MainActor
public protocol Flow: AnyObject {
    #if DEBUG
    /// The flow and its attached sub-flows, by name (debug builds only).
    var tree: Node { get }
    #endif
    /// Whether the flow is started: its context is active.
    var isStarted: Bool { get }
    /// The node's context, as the lifecycle sees it.
    var _context: Context { get }
    /// Starts the flow: the runtime calls it on attach; an app calls it on its root flow.
    func start()
    /// Ends the flow and, first, every sub-flow, last-attached first.
    func end()
}

extension Flow {
    /// Starts the flow; the same as ``start()``, kept for code written against earlier releases
    /// of this runtime.
    public func _start() { start() }

    /// Ends the flow; the same as ``end()``, kept for code written against earlier releases of
    /// this runtime.
    public func _end() { end() }
}

/// A flow whose node has a view that the parent presents.
@preconcurrency @MainActor
public protocol ViewControllableFlow: Flow {
    /// The node's view.
    func getViewController() -> ViewControllable
}

extension ViewControllableFlow {
    /// The view of a flow made with ``AbstractFlow`` when its view type is a `ViewControllable`,
    /// else a placeholder. Flows written as the framework's generator writes them declare their
    /// own `getViewController()`, which takes precedence where the flow's own type is known.
    public func getViewController() -> ViewControllable {
        (self as? any ViewControllerSource)?.viewControllable ?? HeadlessViewController(title: "\(Self.self)")
    }
}

/// A flow whose sub-flows are not watched for leaks once detached: a flow that keeps its
/// detached sub-flows on purpose (a cache of screens) marks itself with it.
public protocol FlowRetaining: AnyObject {}

/// Gives `getViewController()`'s default the view of an ``AbstractFlow``.
@MainActor
protocol ViewControllerSource {
    var viewControllable: ViewControllable { get }
}

/// The flow and its attached sub-flows, by name, as ``Flow/tree`` describes it.
public struct Node {
    /// The flow's name: its type name without a trailing `FlowImp`.
    public let name: String
    /// The attached sub-flows' trees, in attach order.
    public let children: [Self]

    /// A tree node.
    public init(name: String, children: [Self]) {
        self.name = name
        self.children = children
    }
}
