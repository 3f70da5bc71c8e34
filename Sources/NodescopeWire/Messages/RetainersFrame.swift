/// Why an object of a detached node is still alive: the host's own analysis of the references
/// that hold it (protocol version 2, type `0x1B`).
///
/// A path is a list of hops. Hop *i* reads "``RetainerHop/holder`` refers, through
/// ``RetainerHop/reference``, to the holder of hop *i + 1*"; the last hop refers to the object
/// itself (object ``objectIndex`` of ``nodeID``). For a ``RetainerVerdict/cycle`` the first
/// hop's holder is the object itself, so the path leads from the object back to it.
///
/// Wire layout: u64 nodeID, u16 objectIndex, u8 verdict, u8 flags, u32 elapsedMicros, str note,
/// u16 hopCount, then per hop: u8 holderKind, u64 holderNodeID, str holder, str reference,
/// u8 hopFlags, and when hop flag bit 1 is set (protocol version 3) the hop's closure site: str
/// image, u64 fileOffset. Flag bit 0 is ``cutShort``; hop flag bit 0 is
/// ``RetainerHop/isSuspect``, bit 1 ``RetainerHop/closure``.
/// ``holder`` and ``reference`` are at most ``maxLabelBytes`` bytes, ``note`` at most
/// ``maxNoteBytes``, and there are at most ``maxHops`` hops: the encoder cuts longer values, the
/// decoder rejects them, so a frame always fits the frame limit.
public struct RetainersFrame: Equatable, Sendable {
    /// The most hops a path may have.
    public static let maxHops = 64
    /// The longest ``RetainerHop/holder`` or ``RetainerHop/reference``, in UTF-8 bytes.
    public static let maxLabelBytes = 256
    /// The longest ``note``, in UTF-8 bytes.
    public static let maxNoteBytes = 1_024
    /// The longest ``ClosureSite/image`` path, in UTF-8 bytes (a longer one is not sent).
    public static let maxImageBytes = 1_024
    /// The most hops of a path that carry a ``RetainerHop/closure`` (the first ones are sent).
    public static let maxClosureSites = 8

    /// The detached node, at least 1.
    public var nodeID: UInt64
    /// The index of its object that the analysis is about.
    public var objectIndex: UInt16
    /// What holds the object.
    public var verdict: RetainerVerdict
    /// Whether the analysis ran out of its time or size bound before it was complete: the path
    /// is the shortest found so far, or none.
    public var cutShort: Bool
    /// How long the analysis took, in microseconds.
    public var elapsedMicros: UInt32
    /// A sentence for people when there is something to say ("cut short after 50 ms",
    /// "analysis not available: …"), else empty.
    public var note: String
    /// The path, from a root (or the object itself, for a cycle) to the object.
    public var hops: [RetainerHop]

    /// Creates a result.
    public init(
        nodeID: UInt64, objectIndex: UInt16, verdict: RetainerVerdict, cutShort: Bool = false,
        elapsedMicros: UInt32 = 0, note: String = "", hops: [RetainerHop] = []
    ) {
        self.nodeID = nodeID
        self.objectIndex = objectIndex
        self.verdict = verdict
        self.cutShort = cutShort
        self.elapsedMicros = elapsedMicros
        self.note = note
        self.hops = hops
    }

    /// The closure site that each hop sent carries (the first ``maxHops``): a site whose image
    /// path is too long to send whole is not sent (a cut path names no file), nor are the sites
    /// beyond the first ``maxClosureSites``, which keeps the frame within its limit.
    var sentClosureSites: [ClosureSite?] {
        var count = 0
        return hops.prefix(Self.maxHops).map { hop in
            guard let site = hop.closure, site.image.utf8.count <= Self.maxImageBytes, count < Self.maxClosureSites else {
                return nil
            }
            count += 1
            return site
        }
    }

    /// The index of the hop marked as the reference most likely to cut, if any.
    public var suspectIndex: Int? { hops.firstIndex(where: \.isSuspect) }
}

/// One reference on a retainer path: who holds, and through what.
public struct RetainerHop: Equatable, Sendable {
    /// What kind of memory holds the reference.
    public var holderKind: RetainerHolderKind
    /// For a holder that is an object of a node (``RetainerHolderKind/attachedNodeObject`` or
    /// ``RetainerHolderKind/detachedNodeObject``), that node's id; otherwise 0.
    public var holderNodeID: UInt64
    /// The holder's name: a type name (`Session`), a global's demangled name (`main.app`),
    /// `thread stack`, `closure context`, or what is known of unnamed memory
    /// (`a 48-byte heap block`).
    public var holder: String
    /// The reference inside the holder: a field (`.listeners`), an element (`.listeners[3]`,
    /// `["session"]`), a capture (`capture`), or an offset (`+24`) when nothing better is known.
    public var reference: String
    /// Whether this is the reference a developer most likely has to cut (at most one per path).
    public var isSuspect: Bool
    /// When the reference is a stored closure's context (a field, an element or a value of a
    /// function type): where the closure's code is, for the tools to name its source (protocol
    /// version 3).
    public var closure: ClosureSite?

    /// Creates a hop.
    public init(
        holderKind: RetainerHolderKind, holderNodeID: UInt64 = 0, holder: String, reference: String,
        isSuspect: Bool = false, closure: ClosureSite? = nil
    ) {
        self.holderKind = holderKind
        self.holderNodeID = holderNodeID
        self.holder = holder
        self.reference = reference
        self.isSuspect = isSuspect
        self.closure = closure
    }
}

/// Where a stored closure's code is: the function that a closure value points at, as a place in
/// a file (the executable or a shared object) that a symbolizer reads on the tools' side. The host
/// only reads its own memory map for it; naming the closure (`closure #1 in
/// ProfileContextImp.didBecomeActive()`) and its source line is the tools' work.
public struct ClosureSite: Equatable, Hashable, Sendable, Codable {
    /// The file the code is mapped from, as the host's `/proc/self/maps` names it; at most
    /// ``RetainersFrame/maxImageBytes`` bytes.
    public var image: String
    /// The code's offset in that file.
    public var fileOffset: UInt64

    /// Creates a site.
    public init(image: String, fileOffset: UInt64) {
        self.image = image
        self.fileOffset = fileOffset
    }
}

/// What the analysis found holding an object.
public enum RetainerVerdict: UInt8, Sendable, CaseIterable {
    /// The object is reachable from itself through strong references, and from no root.
    case cycle = 1
    /// A path from a root (a global, a thread's stack, an object of an attached node) through
    /// at least one other object.
    case holder = 2
    /// A global or static variable holds the object directly.
    case global = 3
    /// A thread's stack holds the object directly.
    case stack = 4
    /// The analysis was complete and found no reference (a reference it cannot see: a register,
    /// a tagged or encoded pointer, an unbalanced retain).
    case unknown = 5
    /// Not analyzed; ``RetainersFrame/note`` says why.
    case notAnalyzed = 6
}

/// The kind of memory that holds a reference on a retainer path.
public enum RetainerHolderKind: UInt8, Sendable, CaseIterable {
    /// An object of a node that is attached: a legitimate owner, where a holder path starts.
    case attachedNodeObject = 1
    /// An object of a detached node (itself awaiting release, or leaked).
    case detachedNodeObject = 2
    /// Any other Swift object, named by its type.
    case object = 3
    /// A global or static variable.
    case global = 4
    /// A thread's stack.
    case stack = 5
    /// The context of a closure (what it captured).
    case closureContext = 6
    /// The storage of an array, dictionary or set.
    case collection = 7
    /// A heap block that is not a known object, or memory that cannot be named.
    case unknownMemory = 8
}
