/// What an object registered with a node needs in order to report on itself: the tracker, the
/// node, and the object's index in the node.
public struct TrackingHandle: @unchecked Sendable {
    // Unchecked: `unmanagedTracker` is an unmanaged reference, kept valid by the count the
    // handle holds (see `holdsTracker`) or by the tracker living as long as the process.

    /// The tracker the object was registered with.
    public var tracker: NodeTracker { unmanagedTracker.takeUnretainedValue() }
    /// The node the object belongs to.
    public let node: NodeID
    /// The object's index within the node.
    public let index: UInt16

    /// Whether the handle holds a count of its tracker, from its making until
    /// ``reportRelease()``: any tracker but the process-wide one (a test's), which an object may
    /// outlive. The process-wide tracker lives as long as the process, so that the app's threads
    /// neither retain nor release it with every object they register and free (its count would
    /// be one more word that every core writes).
    ///
    /// The count is not a stored reference, so that the handle is plain data: copying it out of
    /// its object (every state change and every release reads it) costs no retain and no
    /// release, and a call through ``Unmanaged/_withUnsafeGuaranteedRef(_:)`` retains nothing
    /// either (a call through an `unowned(unsafe)` reference retained it for the call's length).
    /// Together about 50 instructions a state change or a release on the app's thread.
    private let holdsTracker: Bool
    private let unmanagedTracker: Unmanaged<NodeTracker>

    init(tracker: NodeTracker, node: NodeID, index: UInt16) {
        holdsTracker = !tracker.livesForever
        unmanagedTracker = holdsTracker ? .passRetained(tracker) : .passUnretained(tracker)
        self.node = node
        self.index = index
    }

    /// Tells the tracker that the object is gone. Call it once, from `deinit`: it also gives
    /// back the handle's count of its tracker (see ``TrackedObject``).
    public func reportRelease() {
        let (node, index) = (node, index)
        unmanagedTracker._withUnsafeGuaranteedRef { $0.objectReleased(node: node, index: index) }
        if holdsTracker { unmanagedTracker.release() }
    }

    /// Reports a lifecycle state of the object's node.
    public func reportState(_ state: NodeState) {
        let node = node
        unmanagedTracker._withUnsafeGuaranteedRef { $0.setState(state, of: node) }
    }

    /// Gives back the count of a handle that a new one replaces before its object's release
    /// (the tracker registers the object anew).
    func relinquish() {
        if holdsTracker { unmanagedTracker.release() }
    }
}

/// An object that reports its own release from `deinit`, which is exact and costs nothing while
/// it lives. The runtime's base classes (`AbstractFlow`, `AbstractContext`, `AbstractWorker`,
/// `HeadlessViewController`) adopt it; any other object is watched through a weak reference.
///
/// An adopter stores the handle and, in `deinit`, calls `trackingHandle?.reportRelease()`, once:
/// a handle of a test's tracker keeps that tracker until then.
public protocol TrackedObject: AnyObject {
    /// Set by the tracker when the object is registered with a node.
    var trackingHandle: TrackingHandle? { get set }
}

/// A base class that reports its own release: the runtime's base classes inherit from it, so
/// that the tracker recognizes them with a class cast, which is far cheaper than a protocol
/// conformance look-up on every attach.
open class TrackedObjectBase: TrackedObject {
    /// Set by the tracker when the object is registered with a node.
    ///
    /// Its accesses are not checked for exclusivity at run time: the tracker reads and writes it
    /// once per object at an attach, on the attaching thread, and `deinit` reads it; a check
    /// costs more than the rest of the attach's work on the object.
    @exclusivity(unchecked) public final var trackingHandle: TrackingHandle?

    /// Creates an object that is not yet registered.
    public init() {}

    deinit {
        trackingHandle?.reportRelease()
    }
}
