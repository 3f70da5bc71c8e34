import NodescopeCollector

/// Builds the ``NodeLifetime``s of a stream from the changes the collector makes of it, record by
/// record: a pure accumulator, fed by `nodescope timeline` (a recording replayed), by `check` (the
/// node spans of its trace) and by the daemon's OTLP span export, which takes the lives as they
/// end (``takeEnded(flaggedBy:)``) so that it holds only the nodes still alive.
///
/// Times are the arrival times of the records that made the changes, except attach times, which
/// are the collector's (the host's time of the attach), kept within the stream and no later
/// than the record. A snapshot (``TreeChange/resynced``) is reconciled with the tree it left:
/// nodes that it holds and the log does not are opened, nodes that the log has open and it does
/// not hold were released during the gap before it.
package struct LifetimeLog: Sendable {
    private let startNanos: UInt64
    /// The lives held, by node id (ids are never reused in a process).
    private var lives: [UInt64: NodeLifetime] = [:]
    /// The ids of the lives held, in attach order (with ids taken since, until compacted).
    private var order: [UInt64] = []
    /// The nodes still alive.
    private var open = Set<UInt64>()
    /// Lives that ended since the last ``takeEnded(flaggedBy:)``.
    private var ended: [UInt64] = []
    /// How many objects of each open node are alive: a node released while nodes below it are
    /// still in the tree stays there as a placeholder, with no change of its own but its last
    /// object's release.
    private var aliveObjects: [UInt64: Int] = [:]
    /// The path of every node held (placeholders too), for the paths of their children.
    private var paths: [UInt64: [String]] = [:]

    /// At most this many lives are held at once; the nodes attached past it are counted in
    /// ``untracked`` and left out.
    private let limit: Int
    /// Nodes attached while the log held ``limit`` lives.
    package private(set) var untracked = 0

    /// A log of a stream that starts at `startNanos`, holding at most `limit` lives.
    package init(startNanos: UInt64, limit: Int = .max) {
        self.startNanos = startNanos
        self.limit = limit
    }

    /// How many lives the log holds.
    package var count: Int { lives.count }

    /// Applies the changes of one record that arrived at `now`. `tree` reads the tree after
    /// the record; it is called only for a snapshot.
    package mutating func apply(_ changes: [TreeChange], at now: UInt64, tree: () -> TreeView?) {
        for change in changes {
            switch change {
            case .attached(let info):
                attach(info, now: now)
            case .statusChanged(let id, let status):
                guard open.contains(id), lives[id] != nil else { continue }
                switch status {
                case .detached:
                    if lives[id]?.detachedAt == nil { lives[id]?.detachedAt = now }
                    if aliveObjects[id, default: 0] == 0 { release(id, at: now) }
                case .leaked:
                    lives[id]?.outcome = .leaked
                case .lateRelease:
                    lives[id]?.outcome = .lateRelease
                    close(id, at: now)
                case .unverified:
                    lives[id]?.outcome = .unverified
                case .attached, .started, .active, .inactive, .ended:
                    break
                }
            case .leakFlagged(let record):
                flag(record, now: now)
            case .removed(let id):
                guard open.contains(id), lives[id] != nil else { continue }
                if lives[id]?.outcome == .attached { lives[id]?.outcome = .released }
                close(id, at: now)
            case .resynced:
                if let view = tree() { reconcile(with: view, now: now) }
            case .objectAdded(let id, let object):
                if open.contains(id), object.isAlive { aliveObjects[id, default: 0] += 1 }
            case .objectReleased(let id, _):
                guard open.contains(id), lives[id] != nil else { continue }
                let alive = max(aliveObjects[id, default: 0] - 1, 0)
                aliveObjects[id] = alive
                if alive == 0, lives[id]?.detachedAt != nil { release(id, at: now) }
            case .retainersFound, .sessionEnded:
                break
            }
        }
    }

    /// The lives held, in attach order; a node alive at the end has no end time, and one that
    /// was detached and still awaited its release is ``NodeLifetime/Outcome/awaitingRelease``.
    package func finished() -> [NodeLifetime] {
        order.compactMap { id in
            guard var lifetime = lives[id] else { return nil }
            if open.contains(id), lifetime.outcome == .attached, lifetime.detachedAt != nil { lifetime.outcome = .awaitingRelease }
            return lifetime
        }
    }

    /// Takes out the lives that ended since the last call, and those flagged (leaked or
    /// unverified) at `flaggedBy` or before, whether or not they end later: the log forgets them,
    /// and what happens to them afterwards. In the order they ended, then in attach order.
    package mutating func takeEnded(flaggedBy: UInt64) -> [NodeLifetime] {
        var taken: [NodeLifetime] = []
        for id in ended {
            guard let lifetime = lives.removeValue(forKey: id) else { continue }
            taken.append(lifetime)
            paths[id] = nil
        }
        ended.removeAll(keepingCapacity: true)
        for id in order where open.contains(id) {
            guard let lifetime = lives[id], let flagged = lifetime.flaggedAt, flagged <= flaggedBy,
                lifetime.outcome == .leaked || lifetime.outcome == .unverified
            else { continue }
            taken.append(lifetime)
            lives[id] = nil
            open.remove(id)
            aliveObjects[id] = nil
        }
        if order.count > 2 * lives.count + 1_024 { order.removeAll { lives[$0] == nil } }
        return taken
    }

    private mutating func attach(_ info: NodeInfo, now: UInt64) {
        let path = (info.parent.flatMap { paths[$0] } ?? []) + [info.displayName]
        paths[info.id] = path
        guard !info.isPlaceholder, lives[info.id] == nil else { return }
        guard lives.count < limit else {
            untracked += 1
            return
        }
        order.append(info.id)
        open.insert(info.id)
        aliveObjects[info.id] = info.objects.count(where: \.isAlive)
        var lifetime = NodeLifetime(
            id: info.id, path: path, kind: info.kind, attachedAt: min(max(info.attachedAtNanos, startNanos), now), outcome: .attached)
        lifetime.parent = info.parent
        lifetime.attachSite = info.attachSite
        lifetime.test = info.test
        lives[info.id] = lifetime
    }

    private mutating func flag(_ record: LeakRecord, now: UInt64) {
        guard var lifetime = lives[record.nodeID] else { return }
        let detachedAt = min(max(record.detachedAtNanos, lifetime.attachedAt), now)
        if lifetime.detachedAt.map({ detachedAt < $0 }) ?? true { lifetime.detachedAt = detachedAt }
        lifetime.flaggedAt = min(max(record.flaggedAtNanos, detachedAt), now)
        switch record.verdict {
        case .leaked: lifetime.outcome = .leaked
        case .unverified: lifetime.outcome = .unverified
        case .lateRelease: lifetime.outcome = .lateRelease
        }
        lives[record.nodeID] = lifetime
        if record.verdict == .lateRelease, open.contains(record.nodeID) { close(record.nodeID, at: now) }
    }

    /// A detached node's last object was released: released, or released late after a leak.
    private mutating func release(_ id: UInt64, at now: UInt64) {
        switch lives[id]?.outcome {
        case .attached?, .awaitingRelease?: lives[id]?.outcome = .released
        case .leaked?: lives[id]?.outcome = .lateRelease
        case .released?, .lateRelease?, .unverified?, nil: break
        }
        close(id, at: now)
    }

    private mutating func close(_ id: UInt64, at now: UInt64) {
        guard let lifetime = lives[id] else { return }
        if lifetime.endedAt == nil { lives[id]?.endedAt = max(now, lifetime.attachedAt) }
        if open.remove(id) != nil { ended.append(id) }
        aliveObjects[id] = nil
    }

    private mutating func reconcile(with view: TreeView, now: UInt64) {
        var held = Set<UInt64>()
        for info in view.nodes {
            let path = (info.parent.flatMap { paths[$0] } ?? []) + [info.displayName]
            paths[info.id] = path
            guard !info.isPlaceholder else { continue }
            held.insert(info.id)
            attach(info, now: now)
            guard open.contains(info.id), let lifetime = lives[info.id] else { continue }
            aliveObjects[info.id] = info.objects.count(where: \.isAlive)
            if let detached = info.detachedAtNanos, lifetime.detachedAt == nil {
                lives[info.id]?.detachedAt = min(max(detached, lifetime.attachedAt), now)
            }
            switch info.status {
            case .leaked: lives[info.id]?.outcome = .leaked
            case .unverified: lives[info.id]?.outcome = .unverified
            case .lateRelease:
                lives[info.id]?.outcome = .lateRelease
                close(info.id, at: now)
            case .attached, .started, .active, .inactive, .ended, .detached: break
            }
        }
        for id in open where !held.contains(id) {
            guard lives[id] != nil else { continue }
            if lives[id]?.outcome == .attached { lives[id]?.outcome = .released }
            close(id, at: now)
        }
    }
}
