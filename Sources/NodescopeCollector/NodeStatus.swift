/// Where a node stands in its lifecycle and in the leak check, as shown in trees and reports.
///
/// A node that is detached and fully released within the grace is removed from the tree (it is
/// clean), so it has no status.
public enum NodeStatus: String, Sendable, Codable, CaseIterable {
    /// Attached; no state reported yet.
    case attached
    /// Attached; its flow was started (the last reported state).
    case started
    /// Attached; its context is active.
    case active
    /// Attached; its context is inactive.
    case inactive
    /// Attached; its flow has ended.
    case ended
    /// Detached, some object still alive, grace not run out yet. Also the status of a
    /// placeholder (``NodeInfo/isPlaceholder``): a released or unknown node kept only because
    /// nodes below it are still in the tree.
    case detached
    /// The grace ran out with objects alive: a ghost kept under its former parent.
    case leaked
    /// Was leaked, then every object got released (a warning, with the delay).
    case lateRelease
    /// Detached, grace not run out when its process ended abnormally (no goodbye), or ended
    /// normally without the exit hold: whether it would have been released is unknown.
    case unverified

    /// Whether the node is part of the live tree (attached, in any reported state).
    public var isAttached: Bool {
        switch self {
        case .attached, .started, .active, .inactive, .ended: true
        case .detached, .leaked, .lateRelease, .unverified: false
        }
    }
}
