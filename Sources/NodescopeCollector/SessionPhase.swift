import NodescopeWire

/// Where a host session stands in its life, with what belongs to that stage only (the
/// snapshot being received lives inside its phase, the end's time and manner inside the end).
///
/// The legal sequence (docs/PROTOCOL.md, sections 6 and 7):
/// - `greeted` → `live` at the first frame, which then applies as in `live`;
/// - `live` → `receivingSnapshot` at `snapshotBegin`, → `awaitingSnapshot` at `dropped`,
///   → `saidGoodbye` at `goodbye`;
/// - `awaitingSnapshot` → `receivingSnapshot` at `snapshotBegin`;
/// - `receivingSnapshot` → `live` at `snapshotEnd`;
/// - any phase → `ended` when the stream ends (a snapshot being received is dropped with it).
///
/// A frame that is out of place in a phase (a frame after goodbye, a nested snapshot, a
/// goodbye inside a snapshot or before the snapshot that a `dropped` calls for) is a
/// ``SessionError`` and leaves the phase as it was (but a refused first frame still makes a
/// `greeted` session `live`: it is no phantom). The verdicts that depend on the phase are
/// decided by ``VerdictRules``.
enum SessionPhase {
    /// The hello is read and nothing else yet. A session that ends here is a phantom (a host
    /// that gave up waiting for the answer to its hello) and is forgotten at once.
    case greeted
    /// Deltas apply to the tree (before the first snapshot too: a host SHOULD send it first).
    case live
    /// After `dropped`: the tree is stale until the next snapshot begins; only strings,
    /// origins, heartbeats (which move nothing) and retainer paths may come meanwhile.
    case awaitingSnapshot
    /// Between `snapshotBegin` and `snapshotEnd`: the tree that the replay frames build.
    case receivingSnapshot(SnapshotBuild)
    /// The host said goodbye: nothing may follow; the end of its stream is awaited.
    case saidGoodbye(GoodbyeReason)
    /// The host's stream ended.
    case ended(Ending)

    /// Whether the host's stream has ended.
    var hasEnded: Bool {
        if case .ended = self { return true }
        return false
    }

    /// Whether a frame of the host stream may still come (no goodbye, no end).
    var acceptsFrames: Bool {
        switch self {
        case .greeted, .live, .awaitingSnapshot, .receivingSnapshot: true
        case .saidGoodbye, .ended: false
        }
    }

    /// Whether the tree is stale (after `dropped`, before its snapshot): nothing is judged on it.
    var isStale: Bool {
        if case .awaitingSnapshot = self { return true }
        return false
    }

    /// The goodbye the host said, if it said one (before the end, or as part of it).
    var goodbye: GoodbyeReason? {
        switch self {
        case .saidGoodbye(let reason): reason
        case .ended(let ending): ending.goodbye
        case .greeted, .live, .awaitingSnapshot, .receivingSnapshot: nil
        }
    }

    /// Whether any frame followed the hello.
    var receivedFrames: Bool {
        switch self {
        case .greeted: false
        case .live, .awaitingSnapshot, .receivingSnapshot, .saidGoodbye: true
        case .ended(let ending): ending.receivedFrames
        }
    }

    /// How the session ended; nil until it has.
    var ending: Ending? {
        if case .ended(let ending) = self { return ending }
        return nil
    }

    /// The end of a host's stream: when, how, and what came before it.
    struct Ending: Equatable {
        /// When the stream ended, collector clock.
        var at: UInt64
        /// Whether it ended normally: after a goodbye and without a violation (the server's
        /// word; a replay or a test may end a session normally without a goodbye).
        var normally: Bool
        /// The goodbye read before the end, if any.
        var goodbye: GoodbyeReason?
        /// Whether any frame followed the hello (a session without one is a phantom).
        var receivedFrames: Bool

        /// How the session ended, as its verdicts and reports tell it: a normal end reads as its
        /// goodbye's reason (`normalExit` when there was none), anything else as abnormal.
        var sessionEnd: SessionEnd {
            normally ? SessionEnd(goodbye: goodbye ?? .normalExit) : .abnormal
        }
    }
}
