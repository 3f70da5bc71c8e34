/// A node's router: it attaches and detaches child flows, which starts and ends their nodes.
public protocol Flow: AnyObject {
    /// Whether the flow is started (its node is attached and its context active).
    var isStarted: Bool { get }
    /// The attached child flows, in attach order.
    var subFlows: [Flow] { get }
    /// Starts the flow: the runtime calls it on attach; an app calls it on its root flow.
    func _start()
    /// Ends the flow and, first, every sub-flow, last-attached first.
    func _end()
}

/// A flow whose node has a view that the parent presents.
public protocol ViewControllableFlow: Flow {
    /// The node's view.
    func getViewController() -> ViewControllable
}

/// An object that keeps a flow alive, such as the window that holds the root flow.
public protocol FlowRetaining: AnyObject {
    /// The retained flow.
    var flow: Flow? { get set }
}

extension FlowRetaining {
    /// Retains `flow` and starts it: how an app launches its root node. The root node's attach
    /// site is the caller's.
    public func retainAndStart(_ flow: Flow, file: StaticString = #filePath, line: UInt = #line) {
        self.flow = flow
        (flow as? NodeRegistering)?.registerRoot(at: AttachSite(file: file, line: line))
        flow._start()
    }

    /// Ends the retained flow and lets it go.
    public func endAndRelease() {
        flow?._end()
        flow = nil
    }
}
