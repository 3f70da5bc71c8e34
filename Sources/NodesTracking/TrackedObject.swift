/// What an object registered with a node needs in order to report on itself: the tracker, the
/// node, and the object's index in the node.
public struct TrackingHandle: @unchecked Sendable {
    // Unchecked: `unownedTracker` is an unowned(unsafe) reference, kept valid by `owner` or by
    // the tracker living as long as the process.

    /// The tracker the object was registered with.
    public var tracker: NodeTracker { unownedTracker }
    /// The node the object belongs to.
    public let node: NodeID
    /// The object's index within the node.
    public let index: UInt16

    /// The tracker, without a reference count: the process-wide tracker lives as long as the
    /// process, so that the app's threads do not retain and release it with every object they
    /// register and free (its count would be one more word that every core writes).
    private unowned(unsafe) let unownedTracker: NodeTracker
    /// What keeps any other tracker (a test's) alive while the object is: nil for the
    /// process-wide one.
    private let owner: NodeTracker?

    init(tracker: NodeTracker, node: NodeID, index: UInt16) {
        self.unownedTracker = tracker
        self.owner = tracker.livesForever ? nil : tracker
        self.node = node
        self.index = index
    }

    /// Tells the tracker that the object is gone. Call it from `deinit`.
    public func reportRelease() {
        unownedTracker.objectReleased(node: node, index: index)
    }

    /// Reports a lifecycle state of the object's node.
    public func reportState(_ state: NodeState) {
        unownedTracker.setState(state, of: node)
    }
}

/// An object that reports its own release from `deinit`, which is exact and costs nothing while
/// it lives. The runtime's base classes (`AbstractFlow`, `AbstractContext`, `AbstractWorker`,
/// `HeadlessViewController`) adopt it; any other object is watched through a weak reference.
///
/// An adopter stores the handle and, in `deinit`, calls `trackingHandle?.reportRelease()`.
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
