/// How many nodes of a process stand where, counted one way for every view: `ps`, `tree`,
/// `attach`, `leaks`, `check`, their JSON and the web view show these numbers, in the words of
/// the report vocabulary (`5 attached, 1 leaked, 2 unverified, 0 released late`).
///
/// The verdict counts are counts of leak records (one per flagged node, as `leaks` lists
/// them), so a report and a summary of the same records always agree. Each node is in at most
/// one of them: ``leaked``, ``retainedByGlobal``, ``unverified`` and ``releasedLate`` never
/// overlap; ``exitFlushCut`` is the part of ``unverified`` that an exit flush cut.
public struct NodeCounts: Sendable, Equatable, Codable {
    /// Nodes in the live tree: attached, in any reported state (`attached`, `started`, `active`,
    /// `inactive`, `ended`). What "attached" and a process's node count mean everywhere;
    /// detached nodes still alive (ghosts) and placeholders are not counted.
    public var attached: Int
    /// Detached nodes with an object still alive whose grace has not run out: each will be
    /// released, leaked or, if the process ends first, unverified.
    public var awaitingRelease: Int
    /// Nodes leaked (their grace ran out with an object alive, and it still is, or was when the
    /// process ended), except those that only globals hold.
    public var leaked: Int
    /// Leaked nodes that only globals hold (``LeakRecord/isRetainedOnlyByGlobals``): counted
    /// apart, and not a leak for `check` unless it counts globals.
    public var retainedByGlobal: Int
    /// Nodes whose verdict cannot be known (the process ended within their grace).
    public var unverified: Int
    /// Of the ``unverified`` nodes, those of processes whose exit flush was cut
    /// (``SessionEnd/exitFlushCut``): reported once per process, as a count.
    public var exitFlushCut: Int
    /// Leaked nodes that were released after all, later than the grace.
    public var releasedLate: Int

    /// Creates counts.
    public init(
        attached: Int = 0, awaitingRelease: Int = 0, leaked: Int = 0, retainedByGlobal: Int = 0, unverified: Int = 0,
        exitFlushCut: Int = 0, releasedLate: Int = 0
    ) {
        self.attached = attached
        self.awaitingRelease = awaitingRelease
        self.leaked = leaked
        self.retainedByGlobal = retainedByGlobal
        self.unverified = unverified
        self.exitFlushCut = exitFlushCut
        self.releasedLate = releasedLate
    }

    /// Counts the verdicts of `records`; `flushCut` tells whether a session's exit flush was cut
    /// (then its unverified nodes are counted in ``exitFlushCut`` too).
    public init(
        attached: Int = 0, awaitingRelease: Int = 0, records: some Sequence<LeakRecord>,
        flushCut: (SessionID) -> Bool = { _ in false }
    ) {
        self.init(attached: attached, awaitingRelease: awaitingRelease)
        for record in records { count(record, flushCut: flushCut(record.session)) }
    }

    /// Counts the states of `nodes` (placeholders left out), for a tree that carries no counts:
    /// leaked nodes held only by globals can only be told by their retainer paths, and nodes
    /// beyond a depth limit are not seen.
    public init(nodes: [NodeInfo]) {
        self.init()
        for node in nodes where !node.isPlaceholder {
            switch node.status {
            case .attached, .started, .active, .inactive, .ended: attached += 1
            case .detached: awaitingRelease += 1
            case .leaked:
                let paths = node.retainers ?? []
                let alive = node.objects.filter(\.isAlive)
                let global =
                    !alive.isEmpty
                    && alive.allSatisfy { object in paths.contains { $0.objectIndex == object.index && $0.verdict == .global } }
                if global { retainedByGlobal += 1 } else { leaked += 1 }
            case .unverified: unverified += 1
            case .lateRelease: releasedLate += 1
            }
        }
    }

    /// Adds one record's verdict.
    public mutating func count(_ record: LeakRecord, flushCut: Bool = false) {
        switch record.verdict {
        case .leaked:
            if record.isRetainedOnlyByGlobals { retainedByGlobal += 1 } else { leaked += 1 }
        case .unverified:
            unverified += 1
            if flushCut { exitFlushCut += 1 }
        case .lateRelease:
            releasedLate += 1
        }
    }

    /// The sum of two counts (of several processes).
    public static func + (left: NodeCounts, right: NodeCounts) -> NodeCounts {
        NodeCounts(
            attached: left.attached + right.attached, awaitingRelease: left.awaitingRelease + right.awaitingRelease,
            leaked: left.leaked + right.leaked, retainedByGlobal: left.retainedByGlobal + right.retainedByGlobal,
            unverified: left.unverified + right.unverified, exitFlushCut: left.exitFlushCut + right.exitFlushCut,
            releasedLate: left.releasedLate + right.releasedLate)
    }
}
