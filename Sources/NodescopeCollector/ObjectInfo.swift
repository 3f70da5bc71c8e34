/// One object of a node (its flow, context, a worker, the view …) as reported by the host.
public struct ObjectInfo: Sendable, Equatable, Codable {
    /// The object's index within its node, as the host numbered it (from 0, in the order added).
    public var index: UInt16
    /// The object's role in the node, such as `flow` or `worker`; empty when the host sent none.
    public var role: String
    /// The object's type name.
    public var typeName: String
    /// Whether the host has not reported the object released yet.
    public var isAlive: Bool

    /// Creates an object description.
    public init(index: UInt16, role: String, typeName: String, isAlive: Bool) {
        self.index = index
        self.role = role
        self.typeName = typeName
        self.isAlive = isAlive
    }
}
