/// The leak state machine: deadlines, flags, late releases, clean removal and the end of a session.
extension HostSession {
    /// The earliest grace deadline still pending (the heap's top is kept current).
    var nextDeadline: UInt64? { deadlines.top?.deadline }

    /// Flags the nodes whose grace ran out by the host's watermark, in deadline order, and drops
    /// stale deadlines from the top so that ``nextDeadline`` is exact. Nothing is due before the
    /// host has vouched for any time.
    mutating func processDue(into changes: inout [TreeChange]) {
        while let top = deadlines.top {
            guard isCurrent(top) else {
                deadlines.pop()
                continue
            }
            guard VerdictRules.hasRunOut(top.deadline, by: watermark) else { return }
            deadlines.pop()
            flag(top.slot, verdict: .leaked, at: top.deadline, into: &changes)
        }
    }

    /// Whether a deadline still belongs to a node awaiting release.
    private func isCurrent(_ entry: DeadlineHeap.Entry) -> Bool {
        guard Int(entry.slot) < tree.slots.count else { return false }
        let node = tree.slots[Int(entry.slot)]
        return node.id == entry.id && node.phase == .detached && deadline(after: node.detachedAt) == entry.deadline
    }

    /// Queues the grace deadline of a detached node.
    mutating func queueDeadline(_ slot: UInt32) {
        let node = tree.slots[Int(slot)]
        deadlines.push(.init(deadline: deadline(after: node.detachedAt), id: node.id, slot: slot))
    }

    /// Flags a detached node leaked or unverified and records it.
    mutating func flag(
        _ slot: UInt32, verdict: LeakRecord.Verdict, at flaggedAt: UInt64, into changes: inout [TreeChange]
    ) {
        tree.slots[Int(slot)].phase = verdict == .unverified ? .unverified : .leaked
        openLeaks += 1
        let record = makeRecord(slot, verdict: verdict, flaggedAt: flaggedAt)
        if leakRecords.count < settings.maxLeakRecordsPerSession {
            tree.slots[Int(slot)].leakIndex = UInt32(truncatingIfNeeded: leakRecords.count)
            leakRecords.append(record)
        }
        changes.append(.statusChanged(id: record.nodeID, status: tree.slots[Int(slot)].status))
        changes.append(.leakFlagged(record))
    }

    /// A leaked node was fully released: it becomes a late release, and so does its record.
    mutating func markLateRelease(_ slot: UInt32, at releasedAt: UInt64, into changes: inout [TreeChange]) {
        tree.slots[Int(slot)].phase = .lateRelease
        openLeaks -= 1
        let id = tree.slots[Int(slot)].id
        changes.append(.statusChanged(id: id, status: .lateRelease))
        if let record = updateRecordToLateRelease(tree.slots[Int(slot)].leakIndex, at: releasedAt) {
            changes.append(.leakFlagged(record))
        }
    }

    /// Turns a leaked record into a late release (releasedAt never before the flag time).
    mutating func updateRecordToLateRelease(_ leakIndex: UInt32, at releasedAt: UInt64) -> LeakRecord? {
        guard Int(leakIndex) < leakRecords.count, leakRecords[Int(leakIndex)].verdict == .leaked else { return nil }
        leakRecords[Int(leakIndex)].verdict = .lateRelease
        leakRecords[Int(leakIndex)].releasedAtNanos = max(releasedAt, leakRecords[Int(leakIndex)].flaggedAtNanos)
        return leakRecords[Int(leakIndex)]
    }

    /// A detached node released within its grace: it leaves the tree, unless nodes below it are
    /// still there (then it stays as a placeholder for them). Placeholders left without children
    /// go too.
    mutating func releaseCleanly(_ slot: UInt32, into changes: inout [TreeChange]) {
        let id = tree.slots[Int(slot)].id
        removed.insert(id)
        if !retainers.isEmpty { retainers.remove(id) }
        guard tree.slots[Int(slot)].children.isEmpty else {
            tree.slots[Int(slot)].phase = .anchor
            return
        }
        let parent = tree.slots[Int(slot)].parent
        tree.remove(slot)
        changes.append(.removed(id: id))
        guard parent != NodeTree.noSlot else { return }
        for placeholder in tree.removeEmptyPlaceholders(from: parent) { changes.append(.removed(id: placeholder)) }
    }

    /// Judges what the end of the stream (`ending`) leaves pending: nodes whose grace ran out
    /// by the host's watermark are leaked; the others still awaiting release get the verdict of
    /// ``VerdictRules/verdictAtEnd(_:holdExit:watermark:settled:)`` (held exit, exit settlement
    /// by the host's retainer paths, or unverified), flagged at
    /// ``VerdictRules/flaggedAtEnd(detachedAt:watermark:)``.
    mutating func judgeAtEnd(_ ending: SessionPhase.Ending, into changes: inout [TreeChange]) {
        processDue(into: &changes)
        var waiting = tree.usedSlots.filter { tree.slots[Int($0)].phase == .detached }
        waiting.sort {
            let (a, b) = (tree.slots[Int($0)], tree.slots[Int($1)])
            return a.detachedAt != b.detachedAt ? a.detachedAt < b.detachedAt : a.id < b.id
        }
        for slot in waiting {
            let verdict = VerdictRules.verdictAtEnd(ending, holdExit: settings.holdExit, watermark: watermark) {
                settledVerdict(slot)
            }
            let flaggedAt = VerdictRules.flaggedAtEnd(detachedAt: tree.slots[Int(slot)].detachedAt, watermark: watermark)
            flag(slot, verdict: verdict, at: flaggedAt, into: &changes)
        }
        deadlines.removeAll()
        removed.removeAll()
    }

    /// The verdict that the host's analysis at its exit proves for the node in `slot`, still
    /// awaiting release (``VerdictRules/settledVerdict(alive:paths:)``), or nil when it proves none.
    func settledVerdict(_ slot: UInt32) -> LeakRecord.Verdict? {
        guard !retainers.isEmpty else { return nil }
        let node = tree.slots[Int(slot)]
        return VerdictRules.settledVerdict(
            alive: node.objects.filter(\.isAlive).map(\.index), paths: retainers.paths(of: node.id))
    }

    /// The record of a node being flagged now.
    func makeRecord(_ slot: UInt32, verdict: LeakRecord.Verdict, flaggedAt: UInt64) -> LeakRecord {
        let node = tree.slots[Int(slot)]
        let path = self.path(to: slot)
        let alive = node.objects.filter(\.isAlive).map(objectInfo)
        let paths = retainers.isEmpty ? [] : retainers.paths(of: node.id)
        return LeakRecord(
            session: id, pid: pid, processName: processName, nodeID: node.id, kind: strings.text(node.kind),
            path: path, aliveObjects: alive, detachedAtNanos: node.detachedAt, flaggedAtNanos: flaggedAt,
            releasedAtNanos: nil, verdict: verdict,
            fingerprint: LeakFingerprint.fingerprint(path: path, aliveObjects: alive, retainers: paths),
            retainers: paths, attachSite: location(ofSite: node.site), test: testInfo(node.test))
    }
}
