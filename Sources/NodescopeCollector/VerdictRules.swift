import NodescopeWire

/// Every rule that decides a detached node's verdict, in one place (docs/PROTOCOL.md, section 7,
/// "Verdicts at the end", and section 6, heartbeat): what moves the host's watermark in each
/// ``SessionPhase``, when a grace has run out, what a release proves, what a resync keeps,
/// what the end of a stream means for the nodes still awaiting release, and when the host's
/// retainer paths settle them at exit.
///
/// Pure functions of values: ``HostSession`` asks, and applies the answer to its tree and
/// records.
enum VerdictRules {
    // MARK: - Graces, in the host's time

    /// The end of a grace of `grace` nanoseconds that starts at `detachedAt` (saturating).
    static func deadline(after detachedAt: UInt64, grace: UInt64) -> UInt64 {
        let (sum, overflow) = detachedAt.addingReportingOverflow(grace)
        return overflow ? .max : sum
    }

    /// Whether a grace that ends at `deadline` has run out by the host's `watermark`: nothing is
    /// due before the host has vouched for any time, and the collector's own clock never
    /// flags anything.
    static func hasRunOut(_ deadline: UInt64, by watermark: HostWatermark) -> Bool {
        guard let time = watermark.time else { return false }
        return deadline <= time
    }

    /// Whether a release at `releasedAt` (collector clock) proves that a node whose grace ends
    /// at `deadline` leaked: release times are never later than the release, so an object was
    /// alive at the deadline, whatever the watermark says yet.
    static func releaseProvesLeak(releasedAt: UInt64, deadline: UInt64) -> Bool {
        releasedAt > deadline
    }

    /// Whether a delta's time vouches for the host's stream up to it: only for a host that
    /// sends no heartbeats, and never while the tree is stale.
    static func eventTimeMovesWatermark(_ watermark: HostWatermark, in phase: SessionPhase) -> Bool {
        !watermark.heartbeatsSeen && !phase.isStale
    }

    /// Whether a heartbeat moves the watermark: not between `dropped` and its snapshot (the
    /// tree is stale until then, and nothing is judged on it).
    static func heartbeatMovesWatermark(in phase: SessionPhase) -> Bool {
        !phase.isStale
    }

    // MARK: - Resync

    /// What a snapshot makes of a detached node it holds.
    enum Resynced: Equatable {
        /// Still leaked: it was flagged and an object is still alive.
        case leaked
        /// It was flagged and is now fully released.
        case lateRelease
        /// Still awaiting release: its grace is judged again from its detach time.
        case awaitingRelease
        /// Fully released and never flagged: released cleanly (the host should have left it out).
        case released
    }

    /// What a snapshot makes of a detached node: a flagged node keeps its verdict while an
    /// object is alive, and becomes a late release when none is.
    static func resynced(wasFlagged: Bool, hasAliveObject: Bool) -> Resynced {
        switch (wasFlagged, hasAliveObject) {
        case (true, true): .leaked
        case (true, false): .lateRelease
        case (false, true): .awaitingRelease
        case (false, false): .released
        }
    }

    // MARK: - The end of a stream

    /// The verdict of a node still awaiting release when the stream ended (its grace had not
    /// run out by the watermark).
    ///
    /// - Leaked when the host held its exit for the graces: a normal end whose goodbye, if one
    ///   was read, is `normalExit`, with ``CollectorSettings/holdExit``, from a host that sends no
    ///   heartbeats (one that does vouches for its exit with a last heartbeat, so whatever its
    ///   watermark does not cover was not held for).
    /// - Otherwise, at a normal end with goodbye `normalExit` (``settlesAtExit(_:)``), the
    ///   verdict that the host's retainer paths prove (`settled`, see ``settledVerdict(alive:paths:)``).
    /// - Otherwise unverified: an abnormal end (no goodbye), goodbye `agentDisabled` (which
    ///   does not hold), or `flushIncomplete` (a release may have been in what was cut).
    static func verdictAtEnd(
        _ ending: SessionPhase.Ending, holdExit: Bool, watermark: HostWatermark, settled: () -> LeakRecord.Verdict?
    ) -> LeakRecord.Verdict {
        if heldExit(ending, holdExit: holdExit, watermark: watermark) { return .leaked }
        if settlesAtExit(ending), let verdict = settled() { return verdict }
        return .unverified
    }

    /// Whether the host held its exit for the graces, so that they stand as run out.
    static func heldExit(_ ending: SessionPhase.Ending, holdExit: Bool, watermark: HostWatermark) -> Bool {
        ending.normally && holdExit && (ending.goodbye == nil || ending.goodbye == .normalExit)
            && !watermark.heartbeatsSeen
    }

    /// Whether the host's retainer paths settle the nodes still awaiting release: only at a
    /// normal end whose goodbye is `normalExit` (the flush complete).
    static func settlesAtExit(_ ending: SessionPhase.Ending) -> Bool {
        ending.normally && ending.goodbye == .normalExit
    }

    /// The verdict that the host's analysis at its exit proves for a node still awaiting
    /// release whose `alive` objects the host explained with `paths`, or nil when it proves
    /// none: every alive object held statically (``RetainerPath/isHeldStatically``: a retain
    /// cycle that no root reaches, a global, or plain heap references from one of them) →
    /// leaked (the record then reads as retained by a global when globals hold them all
    /// directly). A stack, a task or an attached node on a path could still let go within the
    /// grace, so it proves nothing.
    static func settledVerdict(alive: [UInt16], paths: [RetainerPath]) -> LeakRecord.Verdict? {
        guard !alive.isEmpty, !paths.isEmpty else { return nil }
        for object in alive {
            guard let path = paths.first(where: { $0.objectIndex == object }), path.isHeldStatically else {
                return nil
            }
        }
        return .leaked
    }

    /// When a node judged at the end is flagged: the end of the host's stream as the host
    /// vouched for it (its watermark), never before the node's detach.
    static func flaggedAtEnd(detachedAt: UInt64, watermark: HostWatermark) -> UInt64 {
        max(watermark.time ?? detachedAt, detachedAt)
    }
}
