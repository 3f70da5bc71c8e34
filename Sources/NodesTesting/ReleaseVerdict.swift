/// The answer of a release expectation: which of the watched objects, if any, were still alive
/// when the grace ran out.
///
/// Its `description` says it in one line, for a test failure:
/// `ProfileFlow: still alive after 1000 ms: context ProfileContextImp, worker SyncWorker`.
public struct ReleaseVerdict: Sendable, Equatable, CustomStringConvertible {
    /// One watched object that was still alive.
    public struct AliveObject: Sendable, Equatable, CustomStringConvertible {
        /// The object's dynamic type name.
        public var typeName: String
        /// Its role in its node (`flow`, `context`, `worker`, `view` …), when known.
        public var role: String?
        /// The name of the node it belongs to, when it is part of a tracked node.
        public var node: String?

        /// Creates a description of an alive object.
        public init(typeName: String, role: String? = nil, node: String? = nil) {
            self.typeName = typeName
            self.role = role
            self.node = node
        }

        /// `context ProfileContextImp`, or the bare type name when the role is unknown.
        public var description: String {
            (role.map { "\($0) " } ?? "") + typeName
        }
    }

    /// What was watched, as the test named it.
    public var name: String
    /// How many objects were watched.
    public var watchedCount: Int
    /// The watched objects still alive when the verdict was given, in the order they were watched.
    public var alive: [AliveObject]
    /// How long the expectation waited for the releases.
    public var waited: Duration
    /// The grace it allowed.
    public var grace: Duration

    /// Creates a verdict.
    public init(name: String, watchedCount: Int, alive: [AliveObject], waited: Duration, grace: Duration) {
        self.name = name
        self.watchedCount = watchedCount
        self.alive = alive
        self.waited = waited
        self.grace = grace
    }

    /// Whether every watched object was released within the grace.
    public var isReleased: Bool { alive.isEmpty }

    /// `ProfileFlow: released (4 objects, within 12 ms)` or
    /// `ProfileFlow: still alive after 1000 ms: context ProfileContextImp, worker SyncWorker`.
    public var description: String {
        if isReleased {
            return "\(name): released (\(watchedCount) object\(watchedCount == 1 ? "" : "s"), within \(Self.milliseconds(waited)))"
        }
        let objects = alive.map { object in
            object.node.map { $0 == name ? object.description : "\(object.description) of node \($0)" } ?? object.description
        }
        return "\(name): still alive after \(Self.milliseconds(grace)): " + objects.joined(separator: ", ")
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        return "\(seconds * 1_000 + attoseconds / 1_000_000_000_000_000) ms"
    }
}
