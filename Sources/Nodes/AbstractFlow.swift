/// The base class of flows.
///
/// Attaching a child (``attach(starting:)``) registers the child's node with the tracker, starts
/// the child's flow, which activates its context, which starts its workers. Detaching
/// (``detach(ending:)``) is the reverse: the child's own sub-flows are ended last-attached
/// first, its workers stopped, its context deactivated, its flow ended and its node detached;
/// then `LeakDetector` watches the node's objects for the grace.
///
/// A flow is started while its context is active, so a flow made with an active context is
/// started from the beginning. Its context must be a ``Context``: any other value raises an
/// assertion (debug builds) and the flow then has an inert context of its own.
///
/// Every object of the node (flow, context, workers, view) reports its release to the tracker.
@preconcurrency @MainActor
open class AbstractFlow<ContextInterfaceType, ViewControllerType>: TrackedObjectBase, ViewControllableFlow, NodeRegistering,
    FlowControllerOwner, ViewControllerSource
{
    #if DEBUG
    /// The flow and its attached sub-flows, by name: the type name without `FlowImp`.
    public var tree: Node {
        let typeName = "\(type(of: self))".split(separator: ".").last.map(String.init) ?? ""
        let name = typeName.hasSuffix("FlowImp") ? String(typeName.dropLast("FlowImp".count)) : typeName
        return Node(name: name, children: flowController.tree.children)
    }
    #endif

    /// Whether the flow is started: its context is active.
    public var isStarted: Bool { _context.isActive }
    /// The node's context, as the lifecycle sees it.
    public let _context: Context
    /// The node's context, through the interface the flow uses.
    public let context: ContextInterfaceType
    /// The node's view.
    public let viewController: ViewControllerType
    /// The attached child flows, in attach order.
    public var subFlows: [Flow] { flowController.flows }

    private let flowController = FlowController()
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
        let contextObject = context as AnyObject
        if let lifecycleContext = contextObject as? Context {
            self._context = lifecycleContext
        } else {
            assertionFailure("\(context) must conform to \(Context.self)")
            self._context = InertContext()
        }
        self.context = context
        self.viewController = viewController
        let workers = (contextObject as? WorkerOwning)?.workers ?? []
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
        super.init()
        flowController.owner = self
        flowController.isFlowLeakDetectionEnabled = !(self is FlowRetaining)
    }

    /// The id of the flow's node in the tracker, while it is attached.
    public final var nodeID: NodeID? { trackingHandle?.node }

    // MARK: Lifecycle

    /// Whether the flow is started, kept apart from the context's state for ``deinit``, which
    /// cannot ask the context (it is not isolated to the main actor).
    private var startedForDeinit = false

    /// A flow released while it is started was never ended: in a debug build that stops the
    /// program, as the Nodes framework does (end a flow before letting it go).
    deinit {
        #if DEBUG
        if startedForDeinit {
            assertionFailure("Lifecycle violation: \(type(of: self)) was released while started; end it first")
        }
        #endif
    }

    /// Called once the flow has started and its context is active: attach initial children here.
    open func didStart() {}

    /// Starts the flow: registers it as a root when no parent attached it, then activates the
    /// context and calls ``didStart()``.
    public final func start() {
        guard !isStarted else { return }
        if !isAttachedAsChild, !isRoot {
            isRoot = true
            register(under: nil, leakDetector: nil, site: nil)
        }
        trackingHandle?.reportState(.started)
        startedForDeinit = true
        _context.activate()
        didStart()
    }

    /// Ends the flow: ends every sub-flow last-attached first, deactivates the context and
    /// reports the end. A root flow is detached here too.
    public final func end() {
        guard isStarted else { return }
        flowController.detachEndingAllFlows()
        _context.deactivate()
        startedForDeinit = false
        trackingHandle?.reportState(.ended)
        if isRoot {
            isRoot = false
            finishNode(watchingForLeaks: true)
        }
    }

    // MARK: Sub-flows

    /// Attaches `subFlow` as a child and starts it (present its view first). The child node's
    /// attach site, which reports show (`ProfileFlow.swift:42`), is the caller's.
    public final func attach(starting subFlow: Flow, file: StaticString = #filePath, line: UInt = #line) {
        flowController.attach(starting: subFlow, site: AttachSite(file: file, line: line))
    }

    /// Attaches `subFlow` as a child and starts it, without an attach site: the form taken when
    /// the method is passed as a function (`flows.forEach(flow.attach)`).
    @_disfavoredOverload
    public final func attach(starting subFlow: Flow) {
        flowController.attach(starting: subFlow, site: nil)
    }

    /// Ends `subFlow` and detaches it (dismiss its view afterwards).
    public final func detach(ending subFlow: Flow) {
        flowController.detach(ending: subFlow)
    }

    /// Ends and detaches every sub-flow of type `T` that `where` accepts, last-attached first.
    public final func detach<T>(endingSubFlowsOfType type: T.Type, where: (_ flow: T) -> Bool) {
        flowController.detach(endingFlowsOfType: type, where: `where`)
    }

    /// Ends and detaches every sub-flow of type `T`, last-attached first.
    public final func detach<T>(endingSubFlowsOfType type: T.Type) {
        flowController.detach(endingFlowsOfType: type) { _ in true }
    }

    /// The first sub-flow of type `T`.
    public final func firstSubFlow<T>(ofType type: T.Type) -> T? {
        flowController.firstFlow(ofType: type)
    }

    /// Calls `perform` with the first sub-flow of type `T`, if there is one.
    public final func withFirstSubFlow<T>(ofType type: T.Type, perform: (_ flow: T) throws -> Void) rethrows {
        try flowController.withFirstFlow(ofType: type, perform: perform)
    }

    /// Every sub-flow of type `T`, in attach order.
    public final func subFlows<T>(ofType type: T.Type) -> [T] {
        flowController.flows(ofType: type)
    }

    /// Calls `perform` with every sub-flow of type `T`, in attach order.
    public final func withSubFlows<T>(ofType type: T.Type, perform: (_ flow: T) throws -> Void) rethrows {
        try flowController.withFlows(ofType: type, perform: perform)
    }

    // MARK: Views

    var viewControllable: ViewControllable {
        (viewController as AnyObject as? ViewControllable) ?? placeholderView
    }

    private lazy var placeholderView: ViewControllable = HeadlessViewController(title: "\(Self.self)")

    // MARK: Tracking

    var trackingParent: TrackingHandle? { trackingHandle }
    var childLeakDetector: LeakDetector? { activeLeakDetector ?? leakDetector }

    final func registerNode(under parent: TrackingHandle?, leakDetector: LeakDetector?, site: AttachSite?) {
        isAttachedAsChild = true
        register(under: parent, leakDetector: leakDetector, site: site)
    }

    final func registerRoot(at site: AttachSite) {
        guard !isStarted, !isAttachedAsChild, !isRoot else { return }
        isRoot = true
        register(under: nil, leakDetector: nil, site: site)
    }

    final func unregisterNode(watchingForLeaks: Bool) {
        isAttachedAsChild = false
        finishNode(watchingForLeaks: watchingForLeaks)
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
    private func finishNode(watchingForLeaks: Bool) {
        if let handle = trackingHandle {
            handle.tracker.detach(handle.node)
        }
        let detector = activeLeakDetector ?? leakDetector
        activeLeakDetector = nil
        guard watchingForLeaks, detector.isEnabled else { return }
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

/// The context of a flow made with a value that is not a ``Context``: it only keeps its state.
private final class InertContext: Context {
    private(set) var isActive = false

    func activate() { isActive = true }

    func deactivate() { isActive = false }
}
