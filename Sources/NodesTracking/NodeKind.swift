/// What kind of architectural unit a node is, as it reads in a tree: `Flow`, `Router`, `Module` …
///
/// Kinds are open: the constants cover the seed architectures, and any other string works.
public struct NodeKind: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The kind's display name.
    public let rawValue: String

    /// No kind: what a change carries where nothing reads its names.
    static var unnamed: NodeKind { NodeKind(rawValue: "") }

    /// A kind with the given display name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A kind from a string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// The kind's display name.
    public var description: String { rawValue }

    /// A node of the Nodes runtime (a Flow with its Context, Workers and view).
    public static let flow: NodeKind = "Flow"
    /// A RIB, named after its router.
    public static let router: NodeKind = "Router"
    /// A VIPER coordinator.
    public static let coordinator: NodeKind = "Coordinator"
    /// A VIPER module (view, interactor, presenter, router).
    public static let viperModule: NodeKind = "ViperModule"
    /// A Builder-Feature-Graph feature.
    public static let feature: NodeKind = "Feature"
    /// A module of an event-based module system.
    public static let module: NodeKind = "Module"
    /// A screen or view that is a node by itself.
    public static let screen: NodeKind = "Screen"
}

/// The role an object plays inside its node: `flow`, `context`, `worker`, `view` …
public struct ObjectRole: RawRepresentable, Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The role's display name.
    public let rawValue: String

    /// A role with the given display name.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A role from a string literal.
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// The role's display name.
    public var description: String { rawValue }

    /// No role: what a change carries where nothing reads its names.
    static var unnamed: ObjectRole { ObjectRole(rawValue: "") }

    /// The router of a Nodes node.
    public static let flow: ObjectRole = "flow"
    /// The interactor of a Nodes node.
    public static let context: ObjectRole = "context"
    /// One of a node's workers.
    public static let worker: ObjectRole = "worker"
    /// The node's view (a `ViewControllable`).
    public static let view: ObjectRole = "view"
    /// A RIBs or VIPER router.
    public static let router: ObjectRole = "router"
    /// A RIBs or VIPER interactor.
    public static let interactor: ObjectRole = "interactor"
    /// A VIPER presenter.
    public static let presenter: ObjectRole = "presenter"
    /// A builder kept alive by its node.
    public static let builder: ObjectRole = "builder"
    /// A coordinator.
    public static let coordinator: ObjectRole = "coordinator"
    /// A module object.
    public static let module: ObjectRole = "module"
}
