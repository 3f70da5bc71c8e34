import NodescopeCollector

/// One node's life in a recording: when it was attached, detached and released, and how it
/// ended. Times are nanoseconds on the recorder's clock (as the collector's `now`).
package struct NodeLifetime: Sendable, Equatable {
    /// How a node's life ended, or where it stood at the end of the recording.
    package enum Outcome: String, Sendable, Equatable, CaseIterable {
        /// Still attached at the end.
        case attached
        /// Detached and released within the grace (or released while the stream had a gap).
        case released
        /// Detached, alive at the end, its grace not run out yet.
        case awaitingRelease
        /// Alive after its grace.
        case leaked
        /// Leaked, then released.
        case lateRelease
        /// The process ended within the node's grace: whether it would have been released is unknown.
        case unverified
    }

    /// The host's id of the node.
    package var id: UInt64
    /// The display names from the root down to the node.
    package var path: [String]
    /// The node's kind.
    package var kind: String
    /// The host's id of the node it was attached under; nil for a root.
    package var parent: UInt64? = nil
    /// Where it was attached, when the host said.
    package var attachSite: SourceSite? = nil
    /// The test it was attached in, when the host said.
    package var test: TestInfo? = nil
    /// When it was attached (the recording's start for a node attached before it).
    package var attachedAt: UInt64
    /// When it was detached; nil when it never was.
    package var detachedAt: UInt64?
    /// When it was flagged as leaked (or unverified), if it was.
    package var flaggedAt: UInt64?
    /// When its life ended in the recording: its release; nil while it was alive at the end.
    package var endedAt: UInt64?
    /// How it ended.
    package var outcome: Outcome

    /// Creates a lifetime.
    package init(
        id: UInt64, path: [String], kind: String, attachedAt: UInt64, detachedAt: UInt64? = nil, flaggedAt: UInt64? = nil,
        endedAt: UInt64? = nil, outcome: Outcome
    ) {
        self.id = id
        self.path = path
        self.kind = kind
        self.attachedAt = attachedAt
        self.detachedAt = detachedAt
        self.flaggedAt = flaggedAt
        self.endedAt = endedAt
        self.outcome = outcome
    }
}
