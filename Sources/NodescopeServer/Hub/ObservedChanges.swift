import NodescopeCollector

/// One batch of changes that the collector made from one message of a host (or its end), as an
/// observer of the server sees it.
package struct ObservedChanges: Sendable {
    /// The host's session.
    package var session: SessionID
    /// The changes, in order.
    package var changes: [TreeChange]
    /// When the message arrived, on the collector's clock.
    package var arrivalNanos: UInt64
    /// The session's tree after the batch, when the batch holds a resync (`.resynced`).
    package var treeAfterResync: TreeView?
}

/// Told of the batches of changes the collector makes, in order, in bunches; returns the
/// sessions whose further changes it does not want (the hub then hands over only their end),
/// so that a declined flood costs the collector's loop nothing but a set lookup a message.
package typealias ChangeObserver = @Sendable ([ObservedChanges]) -> [SessionID]
