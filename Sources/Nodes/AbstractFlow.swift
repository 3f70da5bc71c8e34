/// The base class of flows.
///
/// Attaching a child (``attach(starting:)``) registers the child's node with the tracker, starts
/// the child's flow, which activates its context, which starts its workers. Detaching
/// (``detach(ending:)``) is the reverse: the child's own sub-flows are ended last-attached
/// first, its workers stopped, its context deactivated, its flow ended and its node detached;
/// then `LeakDetector` watches the node's objects for the grace.
///
/// Every object of the node (flow, context, workers, view) reports its release to the tracker.
open class AbstractFlow<ContextInterfaceType, ViewControllerType>: TrackedObjectBase, ViewControllableFlow, NodeRegistering {
    /// The node's context, through the interface the flow uses.
    public final let context: ContextInterfaceType
    /// The node's view.
    public final let viewController: ViewControllerType
    /// Whether the flow is started.
    public final private(set) var isStarted = false

    private var flowController = FlowController()
    /// The context as the lifecycle sees it, and its workers: looked up once, because dynamic
    /// casts are slow and attach/detach run often.
    private let lifecycleContext: Context?
    private let workers: [Worker]
    /// The node's other objects (context, workers, view) as the tracker takes them, cast once
    /// here rather than at every attach: those that report their own release (the runtime's
    /// base classes) as parts of the tracker's one-call attach, the rest to be watched.
    ///
    /// Made here, in the form the tracker takes, because a flow has to hold its objects anyway:
    /// a second list made for each attach and freed with the flow cost more than every event of
    /// the node together.
    private let reportingParts: [NodeTracker.Part]
    private let otherParts: [(object: AnyObject, role: ObjectRole)]
    /// The tracker and leak detector current when the flow was made.
    private let tracker: NodeTracker
    private let leakDetector: LeakDetector
    /// The leak detector of the node while attached: the parent's for a child; for a root, the
    /// one current when the flow was made, unless that was the shared one and another is current
    /// at its attach (a flow made outside a test's `TrackingScope.run` and started inside it).
    private var activeLeakDetector: LeakDetector?
    private var isRoot = false
    private var isAttachedAsChild = false

    /// Creates a flow with its node's context and view.
    public init(context: ContextInterfaceType, viewController: ViewControllerType) {
        self.context = context
        self.viewController = viewController
        let contextObject = context as AnyObject
        self.lifecycleContext = contextObject as? Context
        let workers = (contextObject as? WorkerOwning)?.workers ?? []
        self.workers = workers
        let viewObject = viewController as AnyObject
        var objects: [(object: AnyObject, role: ObjectRole)] = [(contextObject, .context)]
        objects += workers.map { ($0, .worker) }
        if viewObject !== contextObject { objects.append((viewObject, .view)) }
        var reporting: [NodeTracker.Part] = []
        reporting.reserveCapacity(objects.count)
        var others: [(object: AnyObject, role: ObjectRole)] = []
        for (object, role) in objects {
            if let reporter = object as? TrackedObjectBase {
                reporting.append(NodeTracker.Part(object: reporter, role: role))
            } else {
                others.append((object, role))
            }
        }
        self.reportingParts = reporting
        self.otherParts = others
        self.tracker = NodeTracker.current
        self.leakDetector = LeakDetector.current
    }

    /// The attached child flows, in attach order.
    public final var subFlows: [Flow] { flowController.flows }

    /// The node's view as a `ViewControllable`; a flow whose view type is not one has a
    /// placeholder view.
    public final func getViewController() -> ViewControllable {
        (viewController as AnyObject as? ViewControllable) ?? placeholderView
    }

    private lazy var placeholderView: ViewControllable = HeadlessViewController(title: "\(Self.self)")

    /// The id of the flow's node in the tracker, while it is attached.
    public final var nodeID: NodeID? { trackingHandle?.node }

    // MARK: Lifecycle

    /// Starts the flow: registers it as a root when no parent attached it, then activates the
    /// context and calls ``didStart()``.
    public final func _start() {
        guard !isStarted else { return }
        if !isAttachedAsChild, !isRoot {
            isRoot = true
            register(under: nil, leakDetector: nil, site: nil)
        }
        isStarted = true
        trackingHandle?.reportState(.started)
        lifecycleContext?.activate()
        didStart()
    }

    /// Ends the flow: ends every sub-flow last-attached first, deactivates the context and
    /// reports the end. A root flow is detached here too.
    public final func _end() {
        guard isStarted else { return }
        _ = flowController.detachAll()
        lifecycleContext?.deactivate()
        isStarted = false
        trackingHandle?.reportState(.ended)
        if isRoot {
            isRoot = false
            finishNode()
        }
    }

    /// Called once the flow has started and its context is active: attach initial children here.
    open func didStart() {}

    // MARK: Sub-flows

    /// Attaches `subFlow` as a child and starts it (present its view first). The child node's
    /// attach site, which reports show (`ProfileFlow.swift:42`), is the caller's.
    public final func attach(starting subFlow: Flow, file: StaticString = #filePath, line: UInt = #line) {
        _ = flowController.attach(
            starting: subFlow, under: trackingHandle, leakDetector: activeLeakDetector ?? leakDetector,
            site: AttachSite(file: file, line: line))
    }

    /// Ends `subFlow` and detaches it (dismiss its view afterwards).
    public final func detach(ending subFlow: Flow) {
        _ = flowController.detach(ending: subFlow)
    }

    /// Ends and detaches every sub-flow of type `T` that `predicate` accepts.
    public final func detach<T>(endingSubFlowsOfType type: T.Type, _ predicate: (T) -> Bool = { _ in true }) {
        for flow in flowController.flows.reversed() {
            if let typed = flow as? T, predicate(typed) { detach(ending: flow) }
        }
    }

    /// The first sub-flow of type `T`.
    public final func firstSubFlow<T>(ofType type: T.Type) -> T? {
        flowController.first(ofType: type)
    }

    /// Every sub-flow of type `T`, in attach order.
    public final func subFlows<T>(ofType type: T.Type) -> [T] {
        flowController.all(ofType: type)
    }

    // MARK: Tracking

    final func registerNode(under parent: TrackingHandle?, leakDetector: LeakDetector?, site: AttachSite?) {
        isAttachedAsChild = true
        register(under: parent, leakDetector: leakDetector, site: site)
    }

    final func registerRoot(at site: AttachSite) {
        guard !isStarted, !isAttachedAsChild, !isRoot else { return }
        isRoot = true
        register(under: nil, leakDetector: nil, site: site)
    }

    final func unregisterNode() {
        isAttachedAsChild = false
        finishNode()
    }

    private func register(under parent: TrackingHandle?, leakDetector parentDetector: LeakDetector?, site: AttachSite?) {
        // A child reports where its parent does. A root made under the process-wide defaults
        // reports to those current at its attach: a test's scope, when it starts the flow.
        activeLeakDetector = parentDetector ?? (leakDetector === LeakDetector.shared ? LeakDetector.current : leakDetector)
        let tracker = parent?.tracker ?? (self.tracker === NodeTracker.shared ? NodeTracker.current : self.tracker)
        guard tracker.isRecording else { return }
        let id = tracker.attach(
            self, role: .flow, parts: reportingParts, parent: parent?.node, kind: .flow, name: nodeName, site: site)
        // Objects that do not report their own release are watched through weak references.
        for part in otherParts where part.object !== self { tracker.watch(part.object, role: part.role, in: id) }
    }

    /// Detaches the node in the tracker and has the leak detector watch its objects.
    private func finishNode() {
        if let handle = trackingHandle {
            handle.tracker.detach(handle.node)
        }
        let detector = activeLeakDetector ?? leakDetector
        activeLeakDetector = nil
        guard detector.isEnabled else { return }
        detector.expectRelease(
            of: [self] + reportingParts.map { $0.object as AnyObject } + otherParts.map(\.object), node: nodeName)
    }

    /// The node's name in trees and leak paths: the flow's type name without a trailing `Imp`.
    /// Override it to name nodes otherwise; keep it stable across runs, because leak
    /// fingerprints are made of these names.
    open var nodeName: String {
        tracker.nodeName(of: self)
    }
}
