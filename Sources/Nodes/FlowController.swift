/// Keeps a flow's sub-flows: attaching starts a child, detaching ends it, and ending the parent
/// ends every child, last-attached first. ``AbstractFlow`` owns one; apps rarely need their own.
///
/// Attaching a flow twice, or one already started, and detaching one that is not attached are
/// programming errors: they raise an assertion (debug builds) and do nothing.
@preconcurrency @MainActor
public final class FlowController {
    #if DEBUG
    /// The sub-flows' trees, under a node without a name.
    public var tree: Node {
        Node(name: "", children: flows.map(\.tree))
    }
    #endif

    /// The attached flows, in attach order.
    public private(set) var flows: [Flow] = []

    /// The identities of `flows`, so that the guards of attaching and detaching cost the same with
    /// one child as with a hundred thousand (comparing each element retained and released it: a
    /// flat list of 100,000 children took minutes to build).
    private var attached: Set<ObjectIdentifier> = []

    /// Whether a detached flow is watched for leaks (``LeakDetector/detect(_:delay:)``) when no
    /// node tracking watches it already.
    var isFlowLeakDetectionEnabled = true

    /// Where attached flows register their nodes: the owning flow's node, set by ``AbstractFlow``.
    weak var owner: (any FlowControllerOwner)?

    /// An empty controller.
    public init() {}

    /// Runs `withoutFlowLeakDetection` with leak detection of detached flows turned off.
    public func withoutFlowLeakDetection(withoutFlowLeakDetection: (FlowController) -> Void) {
        let wasEnabled = isFlowLeakDetectionEnabled
        isFlowLeakDetectionEnabled = false
        withoutFlowLeakDetection(self)
        isFlowLeakDetectionEnabled = wasEnabled
    }

    /// Attaches `flow` and starts it.
    public func attach(starting flow: Flow) {
        attach(starting: flow, site: nil)
    }

    /// Attaches `flow`, registering its node under the owner's with `site` as its attach site.
    func attach(starting flow: Flow, site: AttachSite?) {
        guard !flow.isStarted, !attached.contains(ObjectIdentifier(flow)) else {
            assertionFailure("Unable to attach \(type(of: flow)): it is already attached or started")
            return
        }
        flows.append(flow)
        attached.insert(ObjectIdentifier(flow))
        if let registering = flow as? NodeRegistering {
            registering.registerNode(
                under: owner?.trackingParent, leakDetector: owner?.childLeakDetector, site: site)
        }
        flow.start()
    }

    /// Ends `flow` and detaches it.
    public func detach(ending flow: Flow) {
        let identity = ObjectIdentifier(flow)
        guard attached.contains(identity), flow.isStarted else {
            assertionFailure("Unable to detach \(type(of: flow)): it is not attached or not started")
            return
        }
        flow.end()
        // The latest attached is the likeliest to go first: search from the end.
        if let index = flows.lastIndex(where: { ObjectIdentifier($0) == identity }) { flows.remove(at: index) }
        attached.remove(identity)
        if let registering = flow as? NodeRegistering {
            // The node's tracking watches every object of the node, the flow included.
            registering.unregisterNode(watchingForLeaks: isFlowLeakDetectionEnabled)
        } else if isFlowLeakDetectionEnabled {
            LeakDetector.detect(flow)
        }
    }

    /// Ends and detaches every flow, last-attached first.
    public func detachEndingAllFlows() {
        for flow in flows.reversed() { detach(ending: flow) }
    }

    /// Ends and detaches every flow of type `T` that `where` accepts, last-attached first.
    public func detach<T>(endingFlowsOfType type: T.Type, where: (_ flow: T) -> Bool) {
        for flow in flows.reversed() {
            if let typed = flow as? T, `where`(typed) { detach(ending: flow) }
        }
    }

    /// The first attached flow of type `T`.
    public func firstFlow<T>(ofType type: T.Type) -> T? {
        for flow in flows { if let typed = flow as? T { return typed } }
        return nil
    }

    /// Calls `perform` with the first attached flow of type `T`, if there is one.
    public func withFirstFlow<T>(ofType type: T.Type, perform: (_ flow: T) throws -> Void) rethrows {
        if let flow = firstFlow(ofType: type) { try perform(flow) }
    }

    /// Every attached flow of type `T`, in attach order.
    public func flows<T>(ofType type: T.Type) -> [T] {
        flows.compactMap { $0 as? T }
    }

    /// Calls `perform` with every attached flow of type `T`, in attach order.
    public func withFlows<T>(ofType type: T.Type, perform: (_ flow: T) throws -> Void) rethrows {
        for flow in flows(ofType: type) { try perform(flow) }
    }
}

/// The flow that owns a ``FlowController``: where its children's nodes register.
@MainActor
protocol FlowControllerOwner: AnyObject {
    /// The owner's node, parent of the nodes attached through the controller.
    var trackingParent: TrackingHandle? { get }
    /// The leak detector the children's nodes use.
    var childLeakDetector: LeakDetector? { get }
}

/// Registers a flow's node with its tracker when it is attached, and detaches it when it is.
@MainActor
protocol NodeRegistering: AnyObject {
    func registerNode(under parent: TrackingHandle?, leakDetector: LeakDetector?, site: AttachSite?)
    /// Registers a flow as a root before it starts, with the site of the app's launch call.
    func registerRoot(at site: AttachSite)
    /// Detaches the node; its objects are watched for leaks unless `watchingForLeaks` is false.
    func unregisterNode(watchingForLeaks: Bool)
}
