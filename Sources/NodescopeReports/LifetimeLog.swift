import NodescopeCollector

/// Builds the ``NodeLifetime``s of a recording from the changes that replaying it makes, record
/// by record: a pure accumulator, fed by `nodescope timeline`.
///
/// Times are the arrival times of the records that made the changes, except attach times, which
/// are the collector's (the host's time of the attach), kept within the recording and no later
/// than the record. A snapshot (``TreeChange/resynced``) is reconciled with the tree it left:
/// nodes that it holds and the log does not are opened, nodes that the log has open and it does
/// not hold were released during the gap before it.
package struct LifetimeLog: Sendable {
    private let startNanos: UInt64
    private var lifetimes: [NodeLifetime] = []
    /// Index in ``lifetimes`` of each node (ids are never reused in a process).
    private var indexOf: [UInt64: Int] = [:]
    /// The nodes still alive.
    private var open = Set<UInt64>()
    /// How many objects of each open node are alive: a node released while nodes below it are
    /// still in the tree stays there as a placeholder, with no change of its own but its last
    /// object's release.
    private var aliveObjects: [UInt64: Int] = [:]
    /// The path of every node seen (placeholders too), for the paths of their children.
    private var paths: [UInt64: [String]] = [:]

    /// A log of a recording that starts at `startNanos`.
    package init(startNanos: UInt64) {
        self.startNanos = startNanos
    }

    /// Applies the changes of one record that arrived at `now`. `tree` reads the tree after
    /// the record; it is called only for a snapshot.
    package mutating func apply(_ changes: [TreeChange], at now: UInt64, tree: () -> TreeView?) {
        for change in changes {
            switch change {
            case .attached(let info):
                attach(info, now: now)
            case .statusChanged(let id, let status):
                guard open.contains(id), let index = indexOf[id] else { continue }
                switch status {
                case .detached:
                    if lifetimes[index].detachedAt == nil { lifetimes[index].detachedAt = now }
                    if aliveObjects[id, default: 0] == 0 { release(index, at: now) }
                case .leaked:
                    lifetimes[index].outcome = .leaked
                case .lateRelease:
                    lifetimes[index].outcome = .lateRelease
                    close(index, at: now)
                case .unverified:
                    lifetimes[index].outcome = .unverified
                case .attached, .started, .active, .inactive, .ended:
                    break
                }
            case .leakFlagged(let record):
                flag(record, now: now)
            case .removed(let id):
                guard open.contains(id), let index = indexOf[id] else { continue }
                if lifetimes[index].outcome == .attached { lifetimes[index].outcome = .released }
                close(index, at: now)
            case .resynced:
                if let view = tree() { reconcile(with: view, now: now) }
            case .objectAdded(let id, let object):
                if open.contains(id), object.isAlive { aliveObjects[id, default: 0] += 1 }
            case .objectReleased(let id, _):
                guard open.contains(id), let index = indexOf[id] else { continue }
                let alive = max(aliveObjects[id, default: 0] - 1, 0)
                aliveObjects[id] = alive
                if alive == 0, lifetimes[index].detachedAt != nil { release(index, at: now) }
            case .retainersFound, .sessionEnded:
                break
            }
        }
    }

    /// The lifetimes, in attach order; a node alive at the end has no end time, and one that
    /// was detached and still awaited its release is ``NodeLifetime/Outcome/awaitingRelease``.
    package func finished() -> [NodeLifetime] {
        var result = lifetimes
        for id in open {
            guard let index = indexOf[id], result[index].outcome == .attached, result[index].detachedAt != nil else { continue }
            result[index].outcome = .awaitingRelease
        }
        return result
    }

    private mutating func attach(_ info: NodeInfo, now: UInt64) {
        let path = (info.parent.flatMap { paths[$0] } ?? []) + [info.displayName]
        paths[info.id] = path
        guard !info.isPlaceholder, indexOf[info.id] == nil else { return }
        indexOf[info.id] = lifetimes.count
        open.insert(info.id)
        aliveObjects[info.id] = info.objects.count(where: \.isAlive)
        lifetimes.append(
            NodeLifetime(
                id: info.id, path: path, kind: info.kind, attachedAt: min(max(info.attachedAtNanos, startNanos), now),
                outcome: .attached))
    }

    private mutating func flag(_ record: LeakRecord, now: UInt64) {
        guard let index = indexOf[record.nodeID] else { return }
        let detachedAt = min(max(record.detachedAtNanos, lifetimes[index].attachedAt), now)
        if lifetimes[index].detachedAt.map({ detachedAt < $0 }) ?? true { lifetimes[index].detachedAt = detachedAt }
        lifetimes[index].flaggedAt = min(max(record.flaggedAtNanos, detachedAt), now)
        switch record.verdict {
        case .leaked: lifetimes[index].outcome = .leaked
        case .unverified: lifetimes[index].outcome = .unverified
        case .lateRelease:
            lifetimes[index].outcome = .lateRelease
            if open.contains(record.nodeID) { close(index, at: now) }
        }
    }

    /// A detached node's last object was released: released, or released late after a leak.
    private mutating func release(_ index: Int, at now: UInt64) {
        switch lifetimes[index].outcome {
        case .attached, .awaitingRelease: lifetimes[index].outcome = .released
        case .leaked: lifetimes[index].outcome = .lateRelease
        case .released, .lateRelease, .unverified: break
        }
        close(index, at: now)
    }

    private mutating func close(_ index: Int, at now: UInt64) {
        if lifetimes[index].endedAt == nil { lifetimes[index].endedAt = max(now, lifetimes[index].attachedAt) }
        open.remove(lifetimes[index].id)
        aliveObjects[lifetimes[index].id] = nil
    }

    private mutating func reconcile(with view: TreeView, now: UInt64) {
        var held = Set<UInt64>()
        for info in view.nodes {
            let path = (info.parent.flatMap { paths[$0] } ?? []) + [info.displayName]
            paths[info.id] = path
            guard !info.isPlaceholder else { continue }
            held.insert(info.id)
            attach(info, now: now)
            guard open.contains(info.id), let index = indexOf[info.id] else { continue }
            aliveObjects[info.id] = info.objects.count(where: \.isAlive)
            if let detached = info.detachedAtNanos, lifetimes[index].detachedAt == nil {
                lifetimes[index].detachedAt = min(max(detached, lifetimes[index].attachedAt), now)
            }
            switch info.status {
            case .leaked: lifetimes[index].outcome = .leaked
            case .unverified: lifetimes[index].outcome = .unverified
            case .lateRelease:
                lifetimes[index].outcome = .lateRelease
                close(index, at: now)
            case .attached, .started, .active, .inactive, .ended, .detached: break
            }
        }
        for id in open where !held.contains(id) {
            guard let index = indexOf[id] else { continue }
            if lifetimes[index].outcome == .attached { lifetimes[index].outcome = .released }
            close(index, at: now)
        }
    }
}
