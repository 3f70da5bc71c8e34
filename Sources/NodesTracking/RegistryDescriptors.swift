/// What nodes of one type attached at one site have in common: their name, kind and origin,
/// kept once in the registry's ``InternTable``.
package struct NodeDescriptor: Hashable, Sendable {
    package var name: String
    package var kind: NodeKind
    package var origin: NodeOrigin

    /// The cache hint: cheap, and equal for equal descriptors.
    var hint: Int { name.utf8.count &+ kind.rawValue.utf8.count &* 3 &+ Int(origin.site?.line ?? 0) }

    package static func == (lhs: NodeDescriptor, rhs: NodeDescriptor) -> Bool {
        lhs.name == rhs.name && lhs.kind == rhs.kind && lhs.origin.test?.id == rhs.origin.test?.id
            && lhs.origin.site?.internKey == rhs.origin.site?.internKey
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(kind)
        hasher.combine(origin.site?.internKey)
        hasher.combine(origin.test?.id)
    }
}

/// An object's role and type name, kept once in the registry's ``InternTable``.
package struct ObjectDescriptor: Hashable, Sendable {
    package var role: ObjectRole
    package var typeName: String

    /// The cache hint: cheap, and equal for equal descriptors.
    var hint: Int { typeName.utf8.count &+ role.rawValue.utf8.count &* 5 }
}
