import NodescopeWire

/// Why an object of a detached node is still alive, as its host found out (protocol version 2,
/// the `retainers` frame): a retain cycle, or the shortest path of strong references from a
/// root to the object, or what the analysis could say instead.
///
/// A path is a list of hops. Hop *i* reads "``Hop/holder`` refers, through ``Hop/reference``,
/// to the holder of hop *i + 1*"; the last hop refers to the object itself (object
/// ``objectIndex`` of its node). For a ``Verdict/cycle`` the first hop's holder is the object
/// itself, so the path leads from the object back to it.
///
/// Names are the host's, as it sent them: print them through ``VisibleText``.
public struct RetainerPath: Sendable, Equatable, Codable {
    /// What holds the object.
    public enum Verdict: String, Sendable, Codable, CaseIterable {
        /// Reachable from itself through strong references, and from no root.
        case cycle
        /// A path from a root (a global, a thread's stack, an object of an attached node)
        /// through at least one other object.
        case holder
        /// A global or static variable holds the object directly.
        case global
        /// A thread's stack holds the object directly.
        case stack
        /// The analysis was complete and found no reference (a register, a tagged or encoded
        /// pointer, an unbalanced retain may hold it).
        case unknown
        /// Not analyzed; ``RetainerPath/note`` says why.
        case notAnalyzed
    }

    /// The kind of memory that holds a reference on the path.
    public enum HolderKind: String, Sendable, Codable, CaseIterable {
        /// An object of an attached node: a legitimate owner, where a holder path starts.
        case attachedNodeObject
        /// An object of a detached node (itself awaiting release, or leaked).
        case detachedNodeObject
        /// Any other Swift object, named by its type.
        case object
        /// A global or static variable.
        case global
        /// A thread's stack.
        case stack
        /// The context of a closure (what it captured).
        case closureContext
        /// The storage of an array, dictionary or set.
        case collection
        /// A heap block that is not a known object, or memory that cannot be named.
        case unknownMemory
    }

    /// One reference on the path: who holds, and through what.
    public struct Hop: Sendable, Equatable, Codable {
        /// What kind of memory holds the reference.
        public var holderKind: HolderKind
        /// For a holder that is an object of a node, that node's id; nil otherwise.
        public var holderNodeID: UInt64?
        /// The holder's name: a type name (`Session`), a global's demangled name (`main.app`),
        /// `thread stack`, `closure context`, or what is known of unnamed memory.
        public var holder: String
        /// The reference inside the holder: a field (`.listeners`), an element
        /// (`.listeners[3]`, `["session"]`), a capture (`capture`), or an offset (`+24`).
        public var reference: String
        /// Whether this is the reference a developer most likely has to cut (at most one per path).
        public var isSuspect: Bool
        /// For a holder that is an object of a node: that node's path of display names from
        /// the root, as the collector knew it when the path arrived, a name followed by `#N`
        /// when it is the Nth of several siblings of that name (`AppFlow`, `LoggedInFlow#2`,
        /// `SettingsFlow`), so that a person can tell the holder from the leaked node when
        /// both are of one type. Nil when the collector did not know the node. Shown, not
        /// compared: it is no part of a path's equality, nor of a fingerprint.
        public var holderNodePath: [String]?

        /// Creates a hop.
        public init(
            holderKind: HolderKind, holderNodeID: UInt64? = nil, holder: String, reference: String, isSuspect: Bool = false,
            holderNodePath: [String]? = nil
        ) {
            self.holderKind = holderKind
            self.holderNodeID = holderNodeID
            self.holder = holder
            self.reference = reference
            self.isSuspect = isSuspect
            self.holderNodePath = holderNodePath
        }

        /// Hops are equal when the host said the same: the collector's ``holderNodePath`` is
        /// left out.
        public static func == (lhs: Hop, rhs: Hop) -> Bool {
            lhs.holderKind == rhs.holderKind && lhs.holderNodeID == rhs.holderNodeID && lhs.holder == rhs.holder
                && lhs.reference == rhs.reference && lhs.isSuspect == rhs.isSuspect
        }
    }

    /// The index of the node's object that the path is about.
    public var objectIndex: UInt16
    /// What holds the object.
    public var verdict: Verdict
    /// The path, from a root (or from the object itself, for a cycle) to the object.
    public var hops: [Hop]
    /// Whether the analysis ran out of its time or size bound: the path is the shortest found
    /// so far, or none.
    public var cutShort: Bool
    /// A sentence from the host when it has something to say, else empty.
    public var note: String
    /// How long the analysis took in the host, in microseconds.
    public var elapsedMicros: UInt32

    /// Creates a path.
    public init(
        objectIndex: UInt16, verdict: Verdict, hops: [Hop] = [], cutShort: Bool = false, note: String = "",
        elapsedMicros: UInt32 = 0
    ) {
        self.objectIndex = objectIndex
        self.verdict = verdict
        self.hops = hops
        self.cutShort = cutShort
        self.note = note
        self.elapsedMicros = elapsedMicros
    }

    /// The path a `retainers` frame carries.
    public init(_ frame: RetainersFrame) {
        self.init(
            objectIndex: frame.objectIndex, verdict: Verdict(frame.verdict),
            hops: frame.hops.map { hop in
                Hop(
                    holderKind: HolderKind(hop.holderKind), holderNodeID: hop.holderNodeID == 0 ? nil : hop.holderNodeID,
                    holder: hop.holder, reference: hop.reference, isSuspect: hop.isSuspect)
            },
            cutShort: frame.cutShort, note: frame.note, elapsedMicros: frame.elapsedMicros)
    }

    /// The position of the hop marked as the reference to cut, if one is.
    public var suspectIndex: Int? { hops.firstIndex(where: \.isSuspect) }

    /// The hop that names the path in a fingerprint and in short notes: the suspect hop, else
    /// the first hop; nil for a path without hops.
    public var keyHop: Hop? { suspectIndex.map { hops[$0] } ?? hops.first }

    /// Whether what holds the object could not let go of it at a normal exit, so that it would
    /// still be alive when its grace ran out: a complete result (not cut short) that is a retain
    /// cycle no root reaches (``Verdict/cycle``), a global holding it (``Verdict/global``), or a
    /// path of plain heap references (``Verdict/holder``) from a global or from a cycle that no
    /// root reaches, through the app's objects, closures and collections only. A thread's stack,
    /// an async task or unknown memory (work in flight) or an attached node's object (which may
    /// let go within the grace) on the path makes it unsettled.
    public var isHeldStatically: Bool {
        guard !cutShort else { return false }
        switch verdict {
        case .cycle, .global:
            return true
        case .holder:
            guard let first = hops.first, first.holderKind == .global || first.holderKind == .detachedNodeObject else {
                return false
            }
            return hops.allSatisfy { [.global, .object, .detachedNodeObject, .closureContext, .collection].contains($0.holderKind) }
        case .stack, .unknown, .notAnalyzed:
            return false
        }
    }

    /// The name of the global that holds the object directly, for a ``Verdict/global`` path.
    public var globalName: String? {
        guard verdict == .global else { return nil }
        return hops.first(where: { $0.holderKind == .global })?.holder ?? hops.first?.holder
    }

    /// About how many bytes the path keeps in memory, for the collector's bound.
    var approximateBytes: Int {
        hops.reduce(64 + note.utf8.count) { $0 + 48 + $1.holder.utf8.count + $1.reference.utf8.count }
    }
}

extension RetainerPath.Verdict {
    /// The verdict of a wire frame.
    init(_ verdict: RetainerVerdict) {
        switch verdict {
        case .cycle: self = .cycle
        case .holder: self = .holder
        case .global: self = .global
        case .stack: self = .stack
        case .unknown: self = .unknown
        case .notAnalyzed: self = .notAnalyzed
        }
    }
}

extension RetainerPath.HolderKind {
    /// The holder kind of a wire hop.
    init(_ kind: RetainerHolderKind) {
        switch kind {
        case .attachedNodeObject: self = .attachedNodeObject
        case .detachedNodeObject: self = .detachedNodeObject
        case .object: self = .object
        case .global: self = .global
        case .stack: self = .stack
        case .closureContext: self = .closureContext
        case .collection: self = .collection
        case .unknownMemory: self = .unknownMemory
        }
    }
}

// The way back, for a stream that rebuilds a session (``HostSession/resyncStream()``).

extension RetainersFrame {
    /// The frame that carries `path` for node `nodeID`, as its host sent it.
    init(_ path: RetainerPath, nodeID: UInt64) {
        self.init(
            nodeID: nodeID, objectIndex: path.objectIndex, verdict: RetainerVerdict(path.verdict), cutShort: path.cutShort,
            elapsedMicros: path.elapsedMicros, note: path.note,
            hops: path.hops.map { hop in
                RetainerHop(
                    holderKind: RetainerHolderKind(hop.holderKind), holderNodeID: hop.holderNodeID ?? 0, holder: hop.holder,
                    reference: hop.reference, isSuspect: hop.isSuspect)
            })
    }
}

extension RetainerVerdict {
    /// The wire verdict of a stored path.
    init(_ verdict: RetainerPath.Verdict) {
        switch verdict {
        case .cycle: self = .cycle
        case .holder: self = .holder
        case .global: self = .global
        case .stack: self = .stack
        case .unknown: self = .unknown
        case .notAnalyzed: self = .notAnalyzed
        }
    }
}

extension RetainerHolderKind {
    /// The wire holder kind of a stored hop.
    init(_ kind: RetainerPath.HolderKind) {
        switch kind {
        case .attachedNodeObject: self = .attachedNodeObject
        case .detachedNodeObject: self = .detachedNodeObject
        case .object: self = .object
        case .global: self = .global
        case .stack: self = .stack
        case .closureContext: self = .closureContext
        case .collection: self = .collection
        case .unknownMemory: self = .unknownMemory
        }
    }
}
