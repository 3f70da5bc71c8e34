import NodescopeWire

/// The collector's whole state: one live tree per host session, the leak state machine, the leak
/// lists and the queries on them.
///
/// Pure logic: no I/O, no clock, no threads. The daemon's server owns one instance on a single
/// event loop and feeds it; every mutating call takes `now`, nanoseconds of the collector
/// machine's `CLOCK_MONOTONIC`, and ``nextDeadline()`` tells it when to call
/// ``advance(now:)`` next (to drop ended sessions past their retention).
///
/// What a leak is: a node leaks when, ``CollectorSettings/graceNanos`` after its detach, any of
/// its objects is still alive. The grace is judged in the host's time and in the stream's order:
/// a node is flagged when the host's *watermark* (its heartbeats, or for a host that sends none
/// the times of its events) passes detach + grace while an object is still alive, so a release
/// that the host made within the grace is never late or leaked however late it is read, and a
/// collector that falls behind never flags anything early. A flagged node stays in the tree as a
/// ghost under its former parent, and a ``LeakRecord`` is listed. If its objects are all released
/// later, it becomes a late release (same record, updated). A node detached and fully released
/// within the grace leaves the tree. When a session ends, nodes still within their grace are
/// judged leaked (a normal end with the exit hold) or unverified.
///
/// A value type: copying a collector copies its state (cheaply, copy-on-write).
public struct Collector: Sendable {
    /// The settings the collector was created with.
    public let settings: CollectorSettings

    /// The sessions, in ascending id order (live and ended).
    private var sessions: [HostSession] = []
    private var nextSessionNumber: UInt64 = 1
    /// UTF-8 bytes of the interned strings of every session kept, live and ended: bounded by
    /// ``CollectorSettings/maxStringBytesTotal``.
    public private(set) var stringBytes = 0
    /// Ended sessions dropped to make room for a live session's strings, not yet taken by
    /// ``takeSessionsDroppedForMemory()``.
    private var droppedForMemory: [ProcessSummary] = []

    /// Creates an empty collector.
    public init(settings: CollectorSettings = .init()) {
        self.settings = settings
    }

    // MARK: - Feeding

    /// Opens a session for a host whose hello was accepted, and returns its id.
    ///
    /// Host times are used as they are when the host reads the collector's clock (`clocks`
    /// `.same`, or `.unknown` with a hello that is not from the future); otherwise they are
    /// shifted by the difference between `now` and the hello's `monotonicNanos` (clamped, never
    /// trapping). So how long a hello took to arrive never shifts a reported time or a verdict
    /// deadline on one machine. The hello's role is not checked: the server opens sessions for
    /// hosts only. `processStartedAt` is when the host process started (collector clock), when
    /// the server could tell; `ps` shows the process's uptime from it.
    public mutating func openSession(
        _ hello: Hello, now: UInt64, clocks: ClockRelation = .unknown, processStartedAt: UInt64? = nil
    ) -> SessionID {
        let id = SessionID(rawValue: nextSessionNumber)
        nextSessionNumber &+= 1
        var session = HostSession(id: id, hello: hello, now: now, clocks: clocks, settings: settings)
        session.processStartedAt = processStartedAt.map { min($0, now) }
        sessions.append(session)
        return id
    }

    /// Applies one frame of a host's stream and returns what changed, in order.
    ///
    /// Throws when the frame breaks a session rule; the session is then left as it was, and the
    /// server closes the connection and ends the session abnormally.
    public mutating func ingest(
        _ message: WireMessage, session: SessionID, now: UInt64
    ) throws(SessionError) -> [TreeChange] {
        var changes: [TreeChange] = []
        try ingest(message, session: session, now: now, into: &changes)
        return changes
    }

    /// Applies one frame of a host's stream, appending what changed to `changes`: the same as
    /// ``ingest(_:session:now:)``, without an array per frame (a server can reuse one buffer).
    public mutating func ingest(
        _ message: WireMessage, session: SessionID, now: UInt64, into changes: inout [TreeChange]
    ) throws(SessionError) {
        guard var index = position(of: session) else {
            throw SessionError(.unknownSession, "session \(session) is not open")
        }
        guard case .defineString(let frame) = message else {
            return try sessions[index].ingest(message, now: now, into: &changes)
        }
        if sessions[index].wouldKeep(frame), stringBytes + frame.value.utf8.count > settings.maxStringBytesTotal {
            try makeRoom(forStringBytes: frame.value.utf8.count, of: session)
            index = position(of: session) ?? index
        }
        let before = sessions[index].stringBytes
        try sessions[index].ingest(message, now: now, into: &changes)
        stringBytes += sessions[index].stringBytes - before
    }

    /// Makes room for `bytes` more bytes of strings of the live `session` within
    /// ``CollectorSettings/maxStringBytesTotal``: drops ended sessions, the earliest ended first,
    /// until they fit. When the live sessions alone leave no room, throws `tooManyStrings` (the
    /// server then closes that host's connection, and the session ends abnormally).
    private mutating func makeRoom(forStringBytes bytes: Int, of session: SessionID) throws(SessionError) {
        let ended = sessions.filter(\.hasEnded).sorted { ($0.endedAt ?? 0, $0.id) < ($1.endedAt ?? 0, $1.id) }
        var dropped = Set<SessionID>()
        for victim in ended where stringBytes + bytes > settings.maxStringBytesTotal {
            dropped.insert(victim.id)
            stringBytes -= victim.stringBytes
            droppedForMemory.append(victim.summary)
        }
        if !dropped.isEmpty { sessions.removeAll { dropped.contains($0.id) } }
        guard stringBytes + bytes <= settings.maxStringBytesTotal else {
            throw SessionError(
                .tooManyStrings,
                "the collector holds its limit of \(settings.maxStringBytesTotal) bytes of strings over all processes; "
                    + "this host's \(sessionValue(session)?.stringBytes ?? 0) bytes and those of the others connected leave "
                    + "no room for more")
        }
    }

    /// The ended sessions dropped since the last call to make room for a live session's strings
    /// (``CollectorSettings/maxStringBytesTotal``), so that the server can log them.
    public mutating func takeSessionsDroppedForMemory() -> [ProcessSummary] {
        guard !droppedForMemory.isEmpty else { return [] }
        defer { droppedForMemory = [] }
        return droppedForMemory
    }

    /// Ends a session at the end of its stream. `normally` is true when the stream ended after a
    /// goodbye and without a violation.
    ///
    /// Nodes whose grace ran out by the host's watermark are leaked. Nodes still within their
    /// grace are judged leaked when the host held its exit for them (`normally`, a goodbye
    /// `normalExit` if one was recorded, and ``CollectorSettings/holdExit``), unverified
    /// otherwise. The session keeps its tree and leaks until retention drops it; a session that
    /// sent nothing after its hello (a host that gave up waiting for the answer) is forgotten at
    /// once, so it is never listed as a process. Ending an ended or unknown session changes
    /// nothing.
    public mutating func endSession(_ session: SessionID, normally: Bool, now: UInt64) -> [TreeChange] {
        guard let index = position(of: session), !sessions[index].hasEnded else { return [] }
        let changes = sessions[index].end(normally: normally, now: now)
        let before = sessions[index].stringBytes
        if !sessions[index].receivedFrames {
            sessions.remove(at: index)
            stringBytes -= before
        } else {
            // An ended session keeps only the strings that its tree and origins name.
            sessions[index].compactStrings()
            stringBytes -= before - sessions[index].stringBytes
        }
        dropEndedSessions(now: now)
        return changes
    }

    /// Drops ended sessions past their retention. Graces are not judged here: they run out in
    /// the host's time, as its stream says (see ``ingest(_:session:now:)``). Returns nothing in
    /// this version; the result keeps room for changes that time alone may cause.
    public mutating func advance(now: UInt64) -> [(SessionID, TreeChange)] {
        dropEndedSessions(now: now)
        return []
    }

    /// The earliest time at which ``advance(now:)`` has something to do (an ended session to
    /// drop), on the collector's clock. Nil when there is nothing pending.
    public func nextDeadline() -> UInt64? {
        var earliest: UInt64?
        for session in sessions {
            guard let endedAt = session.endedAt else { continue }
            let (sum, overflow) = endedAt.addingReportingOverflow(settings.endedSessionRetentionNanos)
            let candidate = overflow ? UInt64.max : sum
            if earliest.map({ candidate < $0 }) ?? true { earliest = candidate }
        }
        return earliest
    }

    private mutating func dropEndedSessions(now: UInt64) {
        var freed = 0
        sessions.removeAll { session in
            guard let endedAt = session.endedAt else { return false }
            let (expiry, overflow) = endedAt.addingReportingOverflow(settings.endedSessionRetentionNanos)
            guard !overflow, expiry <= now else { return false }
            freed += session.stringBytes
            return true
        }
        stringBytes -= freed
        let ended = sessions.filter(\.hasEnded)
        let excess = ended.count - max(0, settings.maxEndedSessions)
        guard excess > 0 else { return }
        let oldest = ended.sorted { ($0.endedAt ?? 0, $0.id) < ($1.endedAt ?? 0, $1.id) }.prefix(excess)
        let dropped = Set(oldest.map(\.id))
        stringBytes -= oldest.reduce(0) { $0 + $1.stringBytes }
        sessions.removeAll { dropped.contains($0.id) }
    }

    /// A measure of how much the collector holds, over every session kept: nodes, objects,
    /// strings, leak records and remembered removals. It grows with the memory a copy of the
    /// collector takes (a replay's keyframes are budgeted with it).
    public var storedItems: Int {
        sessions.reduce(0) { total, session in
            total + session.tree.count + session.tree.objectCount + session.strings.count + session.leakRecords.count
                + session.removed.count
        }
    }

    /// The session with `id`, if it is kept.
    func sessionValue(_ session: SessionID) -> HostSession? {
        position(of: session).map { sessions[$0] }
    }

    private func position(of session: SessionID) -> Int? {
        var low = 0
        var high = sessions.count
        while low < high {
            let middle = (low + high) / 2
            if sessions[middle].id < session { low = middle + 1 } else { high = middle }
        }
        return low < sessions.count && sessions[low].id == session ? low : nil
    }

    // MARK: - Queries

    /// Every session: connected ones first (by connect time), then ended ones (by connect time).
    public func processes() -> [ProcessSummary] {
        let ordered = sessions.sorted { ($0.connectedAt, $0.id) < ($1.connectedAt, $1.id) }
        return (ordered.filter { !$0.hasEnded } + ordered.filter(\.hasEnded)).map(\.summary)
    }

    /// One session at a glance, or nil if it is unknown (or was dropped).
    public func summary(_ session: SessionID) -> ProcessSummary? {
        position(of: session).map { sessions[$0].summary }
    }

    /// The session a user means by a pid or a process name.
    ///
    /// 1. A query of digits is a pid: the connected session with it (the latest, if the pid
    ///    reconnected), else the latest ended one. If no session has it, the query is tried as a name.
    /// 2. Exact name: if connected sessions have it, the one (or ambiguous, when several); else, if
    ///    ended sessions have it, the latest of them (a re-run of the same program).
    /// 3. Name prefix: the same, except that ended sessions with different names are ambiguous.
    /// 4. Otherwise (and for an empty query) not found.
    public func resolve(_ query: String) -> Result<SessionID, ResolveError> {
        guard !query.isEmpty else { return .failure(.notFound(query)) }
        let byConnect = sessions.sorted { ($0.connectedAt, $0.id) < ($1.connectedAt, $1.id) }
        if query.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let pid = UInt32(query) {
            let matching = byConnect.filter { $0.pid == pid }
            if let live = matching.last(where: { !$0.hasEnded }) { return .success(live.id) }
            if let ended = matching.last { return .success(ended.id) }
        }
        for matchesName in [{ (name: String) in name == query }, { (name: String) in name.hasPrefix(query) }] {
            let matching = byConnect.filter { matchesName($0.processName) }
            let live = matching.filter { !$0.hasEnded }
            if live.count == 1 { return .success(live[0].id) }
            if live.count > 1 { return .failure(.ambiguous(live.map(\.summary))) }
            guard let latest = matching.last else { continue }
            if matching.allSatisfy({ $0.processName == latest.processName }) { return .success(latest.id) }
            return .failure(.ambiguous(matching.map(\.summary)))
        }
        return .failure(.notFound(query))
    }

    /// A session's tree in depth-first pre-order, children in attach order (ascending id).
    ///
    /// - Parameters:
    ///   - rootPath: the subtree to show, by node names (display name or kind) from a root down,
    ///     such as `["AppFlow", "LoggedInFlow"]`; a path that does not start at a root matches
    ///     where its last names end (so a single name matches anywhere), the first in pre-order.
    ///     Nil or empty for the whole tree.
    ///   - depth: levels below the view's roots to include (0: the roots only); nil for all. Cut
    ///     children are counted in ``TreeView/truncatedChildren``.
    /// - Returns: nil for an unknown session; a view without nodes when `rootPath` matches nothing.
    public func tree(_ session: SessionID, rootPath: [String]? = nil, depth: Int? = nil) -> TreeView? {
        position(of: session).map { sessions[$0].view(rootPath: rootPath, depth: depth) }
    }

    /// Every node of a session that `path` names (a released node and a live one may share a
    /// path), in pre-order; empty for an unknown session or path. Each has depth 0.
    public func nodes(_ session: SessionID, atPath path: [String]) -> [NodeInfo] {
        position(of: session).map { sessions[$0].nodes(atPath: path) } ?? []
    }

    /// The tests that one session's host (or every session's, `nil`) attached nodes under, in the
    /// order it named them (protocol version 2), without repeats.
    public func tests(_ session: SessionID?) -> [TestInfo] {
        let chosen = session.map { id in position(of: id).map { [sessions[$0]] } ?? [] } ?? sessions
        var seen = Set<TestInfo>()
        return chosen.flatMap { $0.definedTests() }.filter { seen.insert($0).inserted }
    }

    /// The leak records of one session, or of every session (`nil`), ordered by flag time.
    public func leaks(_ session: SessionID?) -> [LeakRecord] {
        let records: [LeakRecord]
        if let session {
            guard let index = position(of: session) else { return [] }
            records = sessions[index].leakRecords
        } else {
            records = sessions.flatMap(\.leakRecords)
        }
        // Stable: equal flag times keep session and flag order.
        return records.enumerated()
            .sorted { ($0.element.flaggedAtNanos, $0.offset) < ($1.element.flaggedAtNanos, $1.offset) }
            .map(\.element)
    }
}
