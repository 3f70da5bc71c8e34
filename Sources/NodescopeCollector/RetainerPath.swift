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
        /// When the reference is a stored closure's context: where the closure's code is
        /// (protocol version 3), and once the tools have read the image's symbols, its name and
        /// source line. Shown, not compared: no part of a path's equality, nor of a fingerprint
        /// (a rebuilt binary moves its code).
        public var closure: Closure?

        /// Creates a hop.
        public init(
            holderKind: HolderKind, holderNodeID: UInt64? = nil, holder: String, reference: String, isSuspect: Bool = false,
            holderNodePath: [String]? = nil, closure: Closure? = nil
        ) {
            self.holderKind = holderKind
            self.holderNodeID = holderNodeID
            self.holder = holder
            self.reference = reference
            self.isSuspect = isSuspect
            self.holderNodePath = holderNodePath
            self.closure = closure
        }

        /// Hops are equal when the host said the same: the collector's ``holderNodePath`` and
        /// the ``closure`` are left out.
        public static func == (lhs: Hop, rhs: Hop) -> Bool {
            lhs.holderKind == rhs.holderKind && lhs.holderNodeID == rhs.holderNodeID && lhs.holder == rhs.holder
                && lhs.reference == rhs.reference && lhs.isSuspect == rhs.isSuspect
        }
    }

    /// A stored closure on a path: where its code is, as the host found it, and what the tools'
    /// symbolizer says of it (its symbol, `closure #1 in ProfileContextImp.didBecomeActive()`,
    /// and where it is written), when they could read the image.
    public struct Closure: Sendable, Equatable, Codable {
        /// The file the closure's code is mapped from, as the host names it.
        public var image: String
        /// The code's offset in that file.
        public var fileOffset: UInt64
        /// The closure's name, demangled and shortened, when the image's symbols name it.
        public var symbol: String?
        /// The source file that defines the closure, as the debug information names it.
        public var file: String?
        /// The line of the closure in ``file``.
        public var line: Int?
        /// The column, when known.
        public var column: Int?

        /// Creates a closure.
        public init(
            image: String, fileOffset: UInt64, symbol: String? = nil, file: String? = nil, line: Int? = nil, column: Int? = nil
        ) {
            self.image = image
            self.fileOffset = fileOffset
            self.symbol = symbol
            self.file = file
            self.line = line
            self.column = column
        }

        /// The site the host sent.
        public var site: ClosureSite { ClosureSite(image: image, fileOffset: fileOffset) }

        /// Where the closure is written, when the tools found its file and a line (0 is a
        /// compiler-made place, no line at all).
        public var source: SourceSite? {
            guard let file, let line, line > 0 else { return nil }
            return SourceSite(file: file, line: UInt32(clamping: line))
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
                    holder: hop.holder, reference: hop.reference, isSuspect: hop.isSuspect,
                    closure: hop.closure.map { Closure(image: $0.image, fileOffset: $0.fileOffset) })
            },
            cutShort: frame.cutShort, note: frame.note, elapsedMicros: frame.elapsedMicros)
    }

    /// The position of the hop marked as the reference to cut, if one is.
    public var suspectIndex: Int? { hops.firstIndex(where: \.isSuspect) }

    /// The closure that the suspect reference keeps, named: the first named closure at or after
    /// the suspect reference on the path (stored there, or kept by what it refers to: a timer's
    /// block, a closure that a reabstraction thunk's context holds); when none follows and the
    /// suspect is a capture of a closure context, the closure whose context it is. Nil when no
    /// named closure is there. Its source line is the line a developer changes.
    public var suspectClosure: Closure? {
        guard let suspect = suspectIndex else { return nil }
        if let closure = hops[suspect...].lazy.compactMap(\.closure).first(where: { $0.symbol != nil }) { return closure }
        guard hops[suspect].holderKind == .closureContext else { return nil }
        // In a cycle the hop before the first is the last (the path leads back to its start).
        let before = suspect > 0 ? suspect - 1 : (verdict == .cycle ? hops.count - 1 : nil)
        return before.flatMap { hops[$0].closure }.flatMap { $0.symbol == nil ? nil : $0 }
    }

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
                    reference: hop.reference, isSuspect: hop.isSuspect, closure: hop.closure?.site)
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
