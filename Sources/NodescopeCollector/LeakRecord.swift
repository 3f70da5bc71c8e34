/// One node that was flagged by the leak check, kept in the collector's leak list.
///
/// There is one record per node: a leaked node that is released later keeps its record, which
/// then reads ``Verdict/lateRelease`` with ``releasedAtNanos`` set.
public struct LeakRecord: Sendable, Equatable, Codable {
    /// The judgement on a flagged node.
    public enum Verdict: String, Sendable, Codable {
        /// The grace ran out with objects alive, and they still are (or were, when the process ended).
        case leaked
        /// Leaked, then every object was released: a warning, with the delay.
        case lateRelease
        /// The process ended before the grace ran out, with objects alive: it cannot be known
        /// whether they would have been released. Fails a gate only when asked to be strict.
        case unverified
    }

    /// The session of the host process.
    public var session: SessionID
    /// The host's process id.
    public var pid: UInt32
    /// The host's process name.
    public var processName: String
    /// The node's id in its process.
    public var nodeID: UInt64
    /// The node's kind.
    public var kind: String
    /// The display names (``NodeInfo/displayName``) from the root down to the node, at flag time.
    public var path: [String]
    /// The node's objects that were alive when it was flagged (for a late release: before it was
    /// released).
    public var aliveObjects: [ObjectInfo]
    /// When the node was detached (host time mapped to the collector's clock), nanoseconds.
    public var detachedAtNanos: UInt64
    /// When the node was flagged, nanoseconds of the collector's clock: the moment its grace ran
    /// out (detach + grace), or the end of its session for an unverified node or one judged at a
    /// held exit.
    public var flaggedAtNanos: UInt64
    /// For a late release: when its last object was released (never before ``flaggedAtNanos``;
    /// the snapshot's arrival when a resync found it gone).
    public var releasedAtNanos: UInt64?
    /// The judgement.
    public var verdict: Verdict
    /// A stable hash for grouping and baselines; see ``LeakFingerprint``. It changes once, when
    /// the host's retainer paths arrive after the node was flagged.
    public var fingerprint: String
    /// Why the node's objects are alive, as its host analysed them (protocol version 2): one
    /// path per analysed object, sorted by object index. Empty when the host sent none (a host
    /// of version 1, an analysis not done or not arrived yet).
    public var retainers: [RetainerPath]
    /// Where the node was attached (protocol version 2); nil (absent in JSON) when unknown.
    public var attachSite: SourceSite?
    /// The test the node was attached under (protocol version 2); nil (absent) for none.
    public var test: TestInfo?

    /// Creates a record.
    public init(
        session: SessionID, pid: UInt32, processName: String, nodeID: UInt64, kind: String,
        path: [String], aliveObjects: [ObjectInfo], detachedAtNanos: UInt64, flaggedAtNanos: UInt64,
        releasedAtNanos: UInt64?, verdict: Verdict, fingerprint: String, retainers: [RetainerPath] = [],
        attachSite: SourceSite? = nil, test: TestInfo? = nil
    ) {
        self.attachSite = attachSite
        self.test = test
        self.session = session
        self.pid = pid
        self.processName = processName
        self.nodeID = nodeID
        self.kind = kind
        self.path = path
        self.aliveObjects = aliveObjects
        self.detachedAtNanos = detachedAtNanos
        self.flaggedAtNanos = flaggedAtNanos
        self.releasedAtNanos = releasedAtNanos
        self.verdict = verdict
        self.fingerprint = fingerprint
        self.retainers = retainers
    }

    private enum CodingKeys: String, CodingKey {
        case session, pid, processName, nodeID, kind, path, aliveObjects, detachedAtNanos, flaggedAtNanos
        case releasedAtNanos, verdict, fingerprint, retainers, attachSite, test
    }

    /// Decodes a record; one written before retainer paths existed (without `retainers`) reads
    /// as a record without them.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        session = try container.decode(SessionID.self, forKey: .session)
        pid = try container.decode(UInt32.self, forKey: .pid)
        processName = try container.decode(String.self, forKey: .processName)
        nodeID = try container.decode(UInt64.self, forKey: .nodeID)
        kind = try container.decode(String.self, forKey: .kind)
        path = try container.decode([String].self, forKey: .path)
        aliveObjects = try container.decode([ObjectInfo].self, forKey: .aliveObjects)
        detachedAtNanos = try container.decode(UInt64.self, forKey: .detachedAtNanos)
        flaggedAtNanos = try container.decode(UInt64.self, forKey: .flaggedAtNanos)
        releasedAtNanos = try container.decodeIfPresent(UInt64.self, forKey: .releasedAtNanos)
        verdict = try container.decode(Verdict.self, forKey: .verdict)
        fingerprint = try container.decode(String.self, forKey: .fingerprint)
        retainers = try container.decodeIfPresent([RetainerPath].self, forKey: .retainers) ?? []
        attachSite = try container.decodeIfPresent(SourceSite.self, forKey: .attachSite)
        test = try container.decodeIfPresent(TestInfo.self, forKey: .test)
    }

    /// The retainer path of the object with `index`, if the host sent one.
    public func retainers(ofObject index: UInt16) -> RetainerPath? {
        retainers.first { $0.objectIndex == index }
    }

    /// Whether only globals hold the node: every object alive at flag time has a path with the
    /// verdict ``RetainerPath/Verdict/global``. `nodescope check` does not count such a leak
    /// unless asked to (`--count-globals`): it is typically an app object that a top-level
    /// `let` keeps until the process exits.
    public var isRetainedOnlyByGlobals: Bool {
        !aliveObjects.isEmpty && aliveObjects.allSatisfy { retainers(ofObject: $0.index)?.verdict == .global }
    }

    /// Stores the path of one object (replacing an earlier one of the same object) and
    /// recomputes the fingerprint, which includes the paths of the alive objects.
    mutating func noteRetainers(_ path: RetainerPath) {
        retainers.insertOrReplace(path)
        fingerprint = LeakFingerprint.fingerprint(path: self.path, aliveObjects: aliveObjects, retainers: retainers)
    }

    /// For a late release: how long after its detach the node was released, in nanoseconds.
    public var releaseDelayNanos: UInt64? {
        releasedAtNanos.map { $0 >= detachedAtNanos ? $0 - detachedAtNanos : 0 }
    }
}
