/// One change of a host's tree, as told to subscribers, in the order the changes happened.
///
/// Node depths in ``attached(_:)`` are absolute (0 for the host's roots).
public enum TreeChange: Sendable, Equatable, Codable {
    /// A node joined the tree, a placeholder was created for an unknown parent, or such a
    /// placeholder was filled in by its node's late attach (same id: replace it).
    case attached(NodeInfo)
    /// A node's status changed.
    case statusChanged(id: UInt64, status: NodeStatus)
    /// An object was added to a node.
    case objectAdded(id: UInt64, object: ObjectInfo)
    /// An object of a node was released.
    case objectReleased(id: UInt64, index: UInt16)
    /// A node left the tree (released cleanly, or a placeholder no longer needed).
    case removed(id: UInt64)
    /// A snapshot replaced the tree: re-read it.
    case resynced
    /// A leak record was created, or changed (a leaked node was released late).
    case leakFlagged(LeakRecord)
    /// The host explained why an object of detached node `id` is alive (protocol version 2).
    /// `record` is the node's leak record, updated with the path (and its fingerprint with it),
    /// when the node was already flagged; nil for a node still awaiting release.
    case retainersFound(id: UInt64, path: RetainerPath, record: LeakRecord?)
    /// The host's session ended; `normally` when it said goodbye with a normal exit.
    case sessionEnded(normally: Bool)
}
