import NodesTracking

/// The stored properties of a type, from its reflection metadata, with their offsets and
/// whether they hold their value strongly.
///
/// This is what the standard library's `_forEachField(of:options:body:)` walks (the same
/// runtime entry points, in the same order), plus the one thing it does not pass on: a field's
/// ownership, because a `weak` or `unowned` property holds no strong reference and must not
/// read as a holder.
enum ReflectedFields {
    /// One stored property.
    struct Field {
        var name: String
        var offset: Int
        var size: Int
        var type: Any.Type
        /// False for `weak`, `unowned` and `unowned(unsafe)` properties.
        var isStrong: Bool
    }

    /// The stored properties of `type` (a class's include its superclasses'), or nil when its
    /// reflection metadata lists none.
    static func of(_ type: Any.Type) -> [Field]? {
        let count = fieldCount(type)
        guard count > 0, count < 4_096 else { return nil }
        var fields: [Field] = []
        fields.reserveCapacity(count)
        for index in 0..<count {
            var metadata = FieldMetadata()
            let valueType = fieldType(type, index: index, fieldMetadata: &metadata)
            defer { metadata.freeFunction?(metadata.name) }
            let name = metadata.name.map { String(cString: $0) } ?? "\(index)"
            fields.append(
                Field(
                    name: name, offset: fieldOffset(type, index: index), size: TypeCatalog.layout(of: valueType).size,
                    type: valueType, isStrong: metadata.isStrong))
        }
        return fields.sorted { $0.offset < $1.offset }
    }

    /// The runtime's `_FieldReflectionMetadata` (and room for fields a later runtime may add).
    fileprivate struct FieldMetadata {
        var name: UnsafePointer<CChar>?
        var freeFunction: (@convention(c) (UnsafePointer<CChar>?) -> Void)?
        var isStrong = false
        var isVar = false
        var reserved: (UInt, UInt, UInt, UInt) = (0, 0, 0, 0)
    }
}

@_silgen_name("swift_reflectionMirror_recursiveCount")
private func fieldCount(_ type: Any.Type) -> Int

@_silgen_name("swift_reflectionMirror_recursiveChildMetadata")
private func fieldType(
    _ type: Any.Type, index: Int, fieldMetadata: UnsafeMutablePointer<ReflectedFields.FieldMetadata>
) -> Any.Type

@_silgen_name("swift_reflectionMirror_recursiveChildOffset")
private func fieldOffset(_ type: Any.Type, index: Int) -> Int
