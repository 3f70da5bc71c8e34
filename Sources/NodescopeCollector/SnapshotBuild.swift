/// A snapshot being received: the tree its replay frames build, to replace the session's tree at
/// its end.
struct SnapshotBuild {
    /// The snapshot's sequence, carried by every frame inside it.
    var sequence: UInt64
    /// The `nodeCount` announced by `snapshotBegin`.
    var expectedNodes: UInt32
    /// `nodeAttached` frames received so far.
    var attachedNodes: UInt32 = 0
    /// The tree built from the replay frames; detached nodes keep the phase `detached` until the
    /// end, when the leak check is applied.
    var tree = NodeTree()
}
