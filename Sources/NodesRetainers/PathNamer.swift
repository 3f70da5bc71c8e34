import NodesTracking
import NodescopeWire

/// Turns the paths of a search into hops as people read them: each holder by its type (or
/// `closure context`, a global's name, `thread stack`, `a 48-byte heap block`), each reference
/// by its field, element, dictionary key or capture (or `+24` when nothing better is known).
///
/// The storage of an array, a dictionary or a set is not a hop of its own: its element joins
/// the reference that leads to it (`Session ─ .listeners[3] ─▶ closure context`).
struct PathNamer {
    let graph: HeapGraph
    let globals: GlobalNames
    /// The objects of detached nodes, by block: their node. (An attached node's object is only
    /// ever the first holder of a path, which its root names.)
    let detachedObjects: [Int32: UInt64]

    /// The hops of `path` to `target`, what each hop refers to (a block), and whether each goes
    /// through a closure (a capture, or a stored closure whose context is the object itself).
    func hops(of path: RetainerSearch.Path, to target: Int32) -> (hops: [RetainerHop], referred: [Int32], closures: [Bool]) {
        var hops: [RetainerHop] = []
        var referred: [Int32] = []
        var closures: [Bool] = []
        if case .word(let address, let region)? = path.root {
            var hop = rootHop(address: address, region: region)
            if case .closureContext = graph.shape(of: path.start), address >= 8, let function = graph.snapshot.word(at: address &- 8) {
                hop.closure = codeSite(function)
            }
            hops.append(hop)
            referred.append(path.start)
            closures.append(false)
        }
        var attachedNodeID: UInt64?
        if case .attached(let nodeID)? = path.root { attachedNodeID = nodeID }
        for (position, edge) in path.edges.enumerated() {
            let next = position + 1 < path.edges.count ? path.edges[position + 1].holder : target
            let shape = graph.shape(of: edge.holder)
            switch shape {
            case .array, .dictionary, .set:
                let element = elementReference(in: edge.holder, at: edge.offset, shape: shape)
                let closure = isClosure(in: edge.holder, at: edge.offset, shape: shape)
                let site = closureSite(in: edge.holder, at: edge.offset, referring: next)
                if !hops.isEmpty {
                    hops[hops.count - 1].reference += element
                    hops[hops.count - 1].closure = site
                    referred[referred.count - 1] = next
                    closures[closures.count - 1] = closure
                    continue
                }
                var hop = holderHop(edge.holder, shape: shape, reference: element)
                hop.closure = site
                hops.append(hop)
                closures.append(closure)
            case .object, .closureContext, .plain, .taskSlab, .task:
                var hop = holderHop(edge.holder, shape: shape, reference: reference(in: edge.holder, at: edge.offset, shape: shape))
                if position == 0, let attachedNodeID {
                    hop.holderKind = .attachedNodeObject
                    hop.holderNodeID = attachedNodeID
                }
                hop.closure = closureSite(in: edge.holder, at: edge.offset, referring: next)
                hops.append(hop)
                closures.append(isClosure(in: edge.holder, at: edge.offset, shape: shape))
            }
            referred.append(next)
        }
        return (hops, referred, closures)
    }

    /// Whether `block` is an object of a detached node (a member of the leaking set).
    func isDetachedNodeObject(_ block: Int32) -> Bool {
        detachedObjects[block] != nil
    }

    // MARK: Holders

    private func rootHop(address: UInt, region: Int) -> RetainerHop {
        switch graph.snapshot.regions[region].kind {
        case .imageData(let path):
            let name = globals.name(of: address, image: path, map: graph.snapshot.map)
            return RetainerHop(holderKind: .global, holder: name.holder, reference: name.reference)
        case .stack(_, let name):
            return RetainerHop(
                holderKind: .stack, holder: "thread stack", reference: name.map { "local in thread \"\($0)\"" } ?? "local")
        case .mainHeap, .arenaHeap, .mappedChunks:
            return RetainerHop(holderKind: .unknownMemory, holder: "heap memory", reference: "+0")
        }
    }

    private func holderHop(_ block: Int32, shape: TypeCatalog.Shape, reference: String) -> RetainerHop {
        if let nodeID = detachedObjects[block] {
            return RetainerHop(
                holderKind: .detachedNodeObject, holderNodeID: nodeID, holder: typeName(of: block, shape: shape),
                reference: reference)
        }
        switch shape {
        case .object:
            return RetainerHop(holderKind: .object, holder: typeName(of: block, shape: shape), reference: reference)
        case .closureContext:
            return RetainerHop(holderKind: .closureContext, holder: "closure context", reference: reference)
        case .array(let index), .dictionary(let index), .set(let index):
            let storage = graph.catalog.classes[graph.catalog.collections[index].storage]
            return RetainerHop(holderKind: .collection, holder: storage.name, reference: reference)
        case .plain:
            return RetainerHop(holderKind: .unknownMemory, holder: typeName(of: block, shape: shape), reference: reference)
        case .task:
            return RetainerHop(holderKind: .unknownMemory, holder: "async task", reference: reference)
        case .taskSlab:
            return RetainerHop(holderKind: .unknownMemory, holder: "async frames", reference: reference)
        }
    }

    private func typeName(of block: Int32, shape: TypeCatalog.Shape) -> String {
        if case .object(let index) = shape { return graph.catalog.classes[index].name }
        let sized = "a \(graph.index.sizes[Int(block)])-byte heap block"
        return firstWordName(of: block).map { "\(sized) beginning with \($0)" } ?? sized
    }

    /// What the first word of a block of no known shape points at, when that is in an image: a
    /// C++ object's virtual table (`_ZTV…+16`), a function, a library's structure, or `a global
    /// of libfoo.so +0x…` where no symbol covers it. It tells whose memory the block is, where
    /// nothing else does.
    private func firstWordName(of block: Int32) -> String? {
        let (base, size) = graph.index.contents(of: block)
        guard size >= 8 else { return nil }
        let word = base.load(as: UInt.self)
        let map = graph.snapshot.map
        guard let position = map.index(containing: word) else { return nil }
        let path = map.mappings[position].path
        guard map.imagePaths.contains(path) else { return nil }
        let name = globals.name(of: word, image: path, map: map)
        return name.reference.isEmpty ? name.holder : "\(name.holder) \(name.reference)"
    }

    // MARK: Closures

    /// Where the code of the closure whose context `next` is stands, when the reference at
    /// `offset` of `block` is a closure value's context: a closure value is a function pointer
    /// and then its context, so the word before the reference is the function, if it points
    /// into an image's code.
    /// The reference is a closure's when it leads to a closure context, or when it is one of a
    /// function type (a field, an element, a capture) whose context is the object itself (a
    /// closure that captures one object only has that object as its context).
    private func closureSite(in block: Int32, at offset: Int, referring next: Int32) -> ClosureSite? {
        guard offset >= 8 else { return nil }
        if case .closureContext = graph.shape(of: next) {
        } else {
            guard isClosure(in: block, at: offset, shape: graph.shape(of: block)) else { return nil }
        }
        let (base, size) = graph.contents(of: block)
        guard offset <= size, offset & 7 == 0 else { return nil }
        return codeSite(base.load(fromByteOffset: offset - 8, as: UInt.self))
    }

    private func codeSite(_ function: UInt) -> ClosureSite? {
        graph.snapshot.map.codeSite(of: function).map { ClosureSite(image: $0.image, fileOffset: $0.fileOffset) }
    }

    // MARK: References

    private func reference(in block: Int32, at offset: Int, shape: TypeCatalog.Shape) -> String {
        switch shape {
        case .object(let index):
            return fieldName(graph.catalog.classes[index].fields, at: offset, depth: 0) ?? "+\(offset)"
        case .closureContext:
            return "capture"
        case .plain, .array, .dictionary, .set, .task, .taskSlab:
            return "+\(offset)"
        }
    }

    /// Whether the reference at `offset` of `block` is a closure's: a capture, or the context of
    /// a stored closure (a field, an element or a dictionary value of a function type).
    private func isClosure(in block: Int32, at offset: Int, shape: TypeCatalog.Shape) -> Bool {
        switch shape {
        case .closureContext:
            return true
        case .object(let index):
            let fields = graph.catalog.classes[index].fields
            guard let field = fields.last(where: { $0.offset <= offset && offset < $0.offset &+ max($0.size, 8) }) else {
                return false
            }
            return isFunction(field.type)
        case .array(let index), .set(let index):
            return isFunction(graph.catalog.collections[index].element.type)
        case .dictionary(let index):
            return isFunction(graph.catalog.collections[index].element.type)
        case .plain, .task, .taskSlab:
            return false
        }
    }

    /// A function type, or an optional one.
    private func isFunction(_ type: Any.Type) -> Bool {
        // Metadata the runtime made during the analysis (for the fields' types) is not in the
        // maps read before it: read directly (safely).
        let metadata = unsafeBitCast(type, to: UInt.self)
        switch ProcessMemory.word(at: metadata) {
        case 0x302: return true
        case 0x202: return ProcessMemory.word(at: metadata + 16).map { ProcessMemory.word(at: $0) == 0x302 } ?? false
        default: return false
        }
    }

    /// `.name` of the field that covers `offset` (and of a field of a struct inside it).
    private func fieldName(_ fields: [TypeCatalog.Field], at offset: Int, depth: Int) -> String? {
        guard let field = fields.last(where: { $0.offset <= offset && offset < $0.offset &+ max($0.size, 8) }) else {
            return nil
        }
        var name = field.name
        for prefix in ["$__lazy_storage_$_"] where name.hasPrefix(prefix) { name.removeFirst(prefix.count) }
        var text = "." + name
        let inner = offset - field.offset
        if depth < 3, isUserStruct(field.type), let nested = ReflectedFields.of(field.type) {
            let innerFields = nested.map { TypeCatalog.Field(name: $0.name, offset: $0.offset, size: $0.size, type: $0.type) }
            if let more = fieldName(innerFields, at: inner, depth: depth + 1) { text += more }
        }
        return text
    }

    /// A struct of the program (not of the standard library, whose insides say nothing).
    private func isUserStruct(_ type: Any.Type) -> Bool {
        guard ProcessMemory.word(at: unsafeBitCast(type, to: UInt.self)) == 0x200 else { return false }
        return !_typeName(type, qualified: true).hasPrefix("Swift.")
    }

    private func elementReference(in block: Int32, at offset: Int, shape: TypeCatalog.Shape) -> String {
        let (base, size) = graph.contents(of: block)
        switch shape {
        case .array(let index):
            let collection = graph.catalog.collections[index]
            guard let elements = graph.arrayElements(base, size: size, collection: collection) else { return "[?]" }
            return "[\((offset - elements.lowerBound) / collection.element.stride)]"
        case .dictionary(let index):
            let collection = graph.catalog.collections[index]
            guard let key = collection.key,
                let buckets = graph.hashedBuckets(base, at: graph.index.starts[Int(block)], size: size, collection: collection)
            else { return "[value]" }
            guard offset >= buckets.values else { return "[key]" }
            let bucket = (offset - buckets.values) / collection.element.stride
            return "[\(keyText(base, at: buckets.keys + bucket * key.stride, type: key.type) ?? "value")]"
        case .set:
            return "[element]"
        case .object, .closureContext, .plain, .task, .taskSlab:
            return "+\(offset)"
        }
    }

    /// A dictionary key as a literal: a `String` (quoted) or an integer; nil for other types.
    private func keyText(_ base: UnsafeRawPointer, at offset: Int, type: Any.Type) -> String? {
        if type == String.self {
            let count = base.load(fromByteOffset: offset, as: UInt64.self)
            let object = base.load(fromByteOffset: offset + 8, as: UInt64.self)
            guard let bytes = stringBytes(countAndFlags: count, object: object) else { return nil }
            return "\"" + Self.escaped(String(decoding: bytes.prefix(60), as: UTF8.self)) + (bytes.count > 60 ? "…\"" : "\"")
        }
        if type == Int.self || type == Int64.self { return String(base.load(fromByteOffset: offset, as: Int64.self)) }
        if type == UInt.self || type == UInt64.self { return String(base.load(fromByteOffset: offset, as: UInt64.self)) }
        if type == Int32.self { return String(base.load(fromByteOffset: offset, as: Int32.self)) }
        if type == UInt32.self { return String(base.load(fromByteOffset: offset, as: UInt32.self)) }
        return nil
    }

    /// The UTF-8 of a `String` from its two words (x86_64): a small string keeps up to 15 bytes
    /// in the words themselves (its count in the top byte's low nibble); a large one keeps its
    /// count in the first word and its bytes 32 bytes past the address in the second.
    private func stringBytes(countAndFlags: UInt64, object: UInt64) -> [UInt8]? {
        if object & (1 << 61) != 0 {
            let count = Int((object >> 56) & 0xF)
            var bytes: [UInt8] = []
            withUnsafeBytes(of: countAndFlags.littleEndian) { bytes += $0 }
            withUnsafeBytes(of: object.littleEndian) { bytes += $0.prefix(7) }
            return Array(bytes.prefix(count))
        }
        let count = Int(countAndFlags & 0xFFFF_FFFF_FFFF)
        let address = UInt(object & 0x00FF_FFFF_FFFF_FFFF) &+ 32
        let wanted = min(count, 61)
        guard wanted > 0 else { return [] }
        var bytes: [UInt8] = []
        var word = address & ~7
        while bytes.count < (address - word) + UInt(wanted) {
            guard let value = graph.catalog.word(word) else { return nil }
            withUnsafeBytes(of: value) { bytes += $0 }
            word += 8
        }
        let start = Int(address - (address & ~7))
        return Array(bytes[start..<start + wanted])
    }

    private static func escaped(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            default: result += scalar.value < 0x20 ? "?" : String(scalar)
            }
        }
        return result
    }
}
