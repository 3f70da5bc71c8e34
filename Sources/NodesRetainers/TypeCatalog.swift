import NodesTracking

/// What the first word of a heap block says the block is, for the Swift runtime's own layouts
/// (x86_64 Linux, no Objective-C interop): a class instance, an array, dictionary or set
/// storage, a closure context, or nothing known.
///
/// A word is taken for a metadata pointer only after it has been checked with safe reads: the
/// metadata kind, a class's flags, sizes and address point, its nominal type descriptor (in an
/// image, of kind class, whose sizes agree with the metadata's), its superclasses, and the
/// generic arguments of metadata built at run time. Only then does the catalog ask the runtime
/// for its name and its fields; a word that fails is a plain block, scanned conservatively.
/// Results are cached by metadata address (metadata live forever).
final class TypeCatalog {
    /// How a block is laid out.
    enum Shape {
        /// Not a Swift object the catalog knows: every word may be a reference.
        case plain
        /// An instance of the class ``classes``[index].
        case object(Int)
        /// A closure context or a box: the captures start at `firstCapture`.
        case closureContext(firstCapture: Int)
        /// A `_ContiguousArrayStorage` of ``collections``[index].
        case array(Int)
        /// A `_DictionaryStorage` of ``collections``[index].
        case dictionary(Int)
        /// A `_SetStorage` of ``collections``[index].
        case set(Int)
        /// A slab of a task's allocator (async frames): a header (the slab's mark, the next
        /// slab, its capacity and how much of it is in use), then the frames.
        case taskSlab
        /// A task: its first slab is inside it.
        case task
    }

    /// A stored property.
    struct Field {
        var name: String
        var offset: Int
        var size: Int
        var type: Any.Type
    }

    /// A Swift class, as the analysis reads its instances.
    struct ClassInfo {
        /// The type's name without its module (`Session`, `Box<Int>`).
        var name: String
        var instanceSize: Int
        /// The byte ranges that may hold strong references (not weak or unowned fields, not
        /// plain values); nil when the fields are not known (scan every word).
        var scanned: [Range<Int>]?
        /// The stored properties, superclasses' first, by offset.
        var fields: [Field]
        /// Whether elements follow the instance (a `ManagedBuffer`): scanned as plain words.
        var scansTail: Bool
    }

    /// What the search needs of a class, in plain values (read for every object it scans).
    struct ClassPlan {
        var instanceSize: Int
        /// Every word after the header (the fields are not known).
        var scansAll: Bool
        /// Whether elements follow the instance (a `ManagedBuffer`).
        var scansTail: Bool
        /// The ranges to scan: ``planRanges``[first..<first + count].
        var first: Int
        var count: Int
    }

    /// The element types of a collection storage.
    struct CollectionInfo {
        /// The storage class (for its name and size).
        var storage: Int
        /// The key type of a dictionary; nil otherwise.
        var key: ElementInfo?
        /// The elements of an array or a set, the values of a dictionary.
        var element: ElementInfo
    }

    /// How elements of a type sit in a collection's storage.
    struct ElementInfo {
        var type: Any.Type
        var stride: Int
        var alignment: Int
        /// The bytes an element uses; past them, up to ``stride``, is padding that nothing
        /// writes, where a stale word of a freed block may lie, never a reference.
        var size: Int = 0
        /// Whether an element may hold a strong reference.
        var scanned: Bool

        /// Whether a word of an element lies (in part) in its padding: an element of 17 bytes in
        /// a stride of 24 has its third word mostly padding. Such elements are scanned one by one,
        /// their whole words within ``size`` only.
        var hasPadding: Bool { size < stride || size % 8 != 0 }

        /// The bytes of an element to scan: its size (all of its stride when its size is not known).
        var used: Int { size > 0 ? min(size, stride) : stride }
    }

    @exclusivity(unchecked) private(set) var classes: [ClassInfo] = []
    /// ``classes``' plans, by the same index.
    @exclusivity(unchecked) private(set) var plans: [ClassPlan] = []
    /// The byte ranges of every plan.
    @exclusivity(unchecked) private(set) var planRanges: [Range<Int>] = []
    @exclusivity(unchecked) private(set) var collections: [CollectionInfo] = []
    /// Shapes by metadata address, kept across analyses.
    @exclusivity(unchecked) private var shapes: [UInt: Shape] = [:]
    /// Metadata found wrong during the current analysis.
    private var rejected: Set<UInt> = []
    /// The shapes of the metadata met last, by a hash of their address.
    @exclusivity(unchecked) private var recent = [(isa: UInt, shape: Shape)](repeating: (0, .plain), count: 1_024)
    /// Class metadata validated, across analyses.
    private var validClasses: Set<UInt> = []
    /// The metadata checked during this analysis that is not in an image.
    private var heapResident: [UInt] = []

    private var map = MemoryMap(mappings: [])
    private var snapshot: MemorySnapshot?

    /// The marks of the concurrency runtime's tasks and slabs (what it exports for debuggers).
    private(set) lazy var taskMetadata = ProcessMemory.pointer(named: "_swift_concurrency_debug_asyncTaskMetadata")
    private(set) lazy var slabMetadata = ProcessMemory.pointer(named: "_swift_concurrency_debug_asyncTaskSlabMetadata")
    /// The size of a task's own fields: a child task's parent follows them (and the task's flags
    /// say whether it is a child).
    private(set) lazy var taskSize = ProcessMemory.pointer(named: "_swift_concurrency_debug_asyncTaskSize").flatMap {
        $0 <= 4_096 ? Int($0) : nil
    }
    /// Where the Swift runtime's metadata allocator keeps its current pool (the start of what is
    /// free in it, and how many bytes are free), and the size of a pool it allocates from the heap
    /// (the first pool, in its own data, is bigger): what the runtime exports for heap tools.
    private(set) lazy var metadataPool = ProcessMemory.pointer(named: "_swift_debug_allocationPoolPointer")
    private(set) lazy var metadataPoolSize = ProcessMemory.pointer(named: "_swift_debug_metadataAllocatorPageSize")

    init() {}

    /// A catalog for a second thread that starts from what this one knows now and then learns
    /// on its own: the two share nothing that either one changes (the tables are values, copied
    /// when one of them writes), and a type met by both is inspected by both (in the same
    /// memory, with the same answer).
    func copyForAnotherThread() -> TypeCatalog {
        let copy = TypeCatalog()
        (copy.classes, copy.plans, copy.planRanges, copy.collections) = (classes, plans, planRanges, collections)
        (copy.shapes, copy.rejected, copy.recent, copy.validClasses) = (shapes, rejected, recent, validClasses)
        (copy.map, copy.snapshot) = (map, snapshot)
        (copy.taskMetadata, copy.slabMetadata, copy.taskSize) = (taskMetadata, slabMetadata, taskSize)
        (copy.metadataPool, copy.metadataPoolSize) = (metadataPool, metadataPoolSize)
        return copy
    }

    /// Looks up now what an analysis in a forked child would otherwise look up there, where a
    /// lock that another thread held at the fork stays held (``FrozenChild``).
    func prepare() {
        _ = (taskMetadata, slabMetadata, taskSize, metadataPool, metadataPoolSize)
    }

    /// Starts an analysis over `snapshot`: what was found wrong before is looked at again.
    func begin(_ snapshot: MemorySnapshot) {
        self.snapshot = snapshot
        map = snapshot.map
        rejected.removeAll(keepingCapacity: true)
        // Metadata in the heap is only known for one analysis: the heap may have reused its
        // place since (fake or freed metadata must not pass for checked).
        for metadata in heapResident {
            shapes[metadata] = nil
            validClasses.remove(metadata)
        }
        heapResident.removeAll()
        if classes.count > 50_000 {
            (classes, plans, planRanges, collections, shapes, validClasses) = ([], [], [], [], [:], [])
        }
        for slot in recent.indices { recent[slot] = (0, .plain) }
    }

    /// Ends an analysis: the snapshot goes.
    func end() {
        snapshot = nil
    }

    /// The shape of a block whose first word is `isa` and whose usable size is `size`.
    @inline(__always)
    func shape(isa: UInt, blockSize: Int) -> Shape {
        // Metadata is word-aligned and above the first page: text, a count, a flag word is not.
        guard isa & 7 == 0, isa >= 4_096, isa >> 47 == 0 else { return .plain }
        let slot = Int(truncatingIfNeeded: (isa >> 3) ^ (isa >> 13)) & 1_023
        let shape: Shape
        if recent[slot].isa == isa {
            shape = recent[slot].shape
        } else {
            shape = lookUp(isa)
            recent[slot] = (isa, shape)
        }
        switch shape {
        case .object(let index): return plans[index].instanceSize <= blockSize ? shape : .plain
        case .array(let index), .dictionary(let index), .set(let index):
            return plans[collections[index].storage].instanceSize <= blockSize ? shape : .plain
        case .closureContext(let first): return first < blockSize ? shape : .plain
        case .taskSlab: return blockSize >= 32 ? shape : .plain
        case .plain, .task: return shape
        }
    }

    private func lookUp(_ isa: UInt) -> Shape {
        if let known = shapes[isa] { return known }
        guard !rejected.contains(isa) else { return .plain }
        guard let found = inspect(isa) else {
            rejected.insert(isa)
            return .plain
        }
        shapes[isa] = found
        if !map.isInImage(isa) { heapResident.append(isa) }
        return found
    }

    // MARK: Inspecting metadata

    private func inspect(_ isa: UInt) -> Shape? {
        if isa == slabMetadata { return .taskSlab }
        if isa == taskMetadata { return .task }
        guard isa & 7 == 0, map.isReadable(isa, length: 24), let kind = word(isa) else { return nil }
        switch kind {
        case 0:
            guard isClassMetadata(isa, depth: 0) else { return nil }
            return describeClass(isa)
        case 0x400:
            // A closure context: static metadata, then the offset of the first capture.
            guard map.isInImage(isa), let offset = word(isa + 8).map({ Int($0 & 0xFFFF_FFFF) }), offset >= 16, offset < 4_096,
                offset & 7 == 0
            else { return nil }
            return .closureContext(firstCapture: offset)
        case 0x500:
            // A box (a captured `var`, an indirect or existential value): the value's offset,
            // then the boxed type.
            guard let offset = word(isa + 8).map({ Int($0 & 0xFFFF_FFFF) }), offset >= 16, offset < 4_096, offset & 7 == 0,
                let boxed = word(isa + 16), isTypeMetadata(boxed, depth: 1)
            else { return nil }
            return .closureContext(firstCapture: offset)
        default:
            return nil
        }
    }

    /// Whether `metadata` is a Swift class's metadata, checked field by field.
    private func isClassMetadata(_ metadata: UInt, depth: Int) -> Bool {
        if validClasses.contains(metadata) { return true }
        guard depth < 32, metadata & 7 == 0, map.isReadable(metadata, length: 56),
            let words = words(metadata, count: 7), words[0] == 0
        else { return false }
        let flags = words[2] & 0xFFFF_FFFF
        let instanceAddressPoint = words[2] >> 32
        let instanceSize = words[3] & 0xFFFF_FFFF
        let alignMask = (words[3] >> 32) & 0xFFFF
        let classSize = words[4] & 0xFFFF_FFFF
        let classAddressPoint = words[4] >> 32
        let descriptor = words[5]
        guard flags & 2 != 0, flags < 0x20, instanceAddressPoint == 0, instanceSize >= 16, instanceSize <= 1 << 24,
            alignMask >= 7, alignMask < 4_096, alignMask & (alignMask + 1) == 0, classAddressPoint & 7 == 0,
            classSize > classAddressPoint, classSize <= 1 << 20, descriptor & 3 == 0, map.isInImage(descriptor),
            let descriptorFlags = u32(descriptor), descriptorFlags & 0x1F == 16,
            let negative = u32(descriptor + 24), let positive = u32(descriptor + 28),
            let immediate = u32(descriptor + 32), immediate <= positive
        else { return false }
        let resilientSuperclass = descriptorFlags & (1 << (16 + 13)) != 0
        if resilientSuperclass {
            // Built at run time from a superclass in another module: the descriptor's cache
            // (after the superclass's reference, the first of the singleton initialization's
            // three references) must point back at it. Generic ones are not read.
            guard descriptorFlags & 0x80 == 0, (descriptorFlags >> 16) & 3 == 1, let offset = u32(descriptor + 48),
                word(descriptor + 48 &+ UInt(bitPattern: Int(Int32(bitPattern: offset)))) == metadata
            else { return false }
        } else {
            guard (UInt(negative) + UInt(positive)) * 8 == classSize, UInt(negative) * 8 == classAddressPoint else { return false }
        }
        if descriptorFlags & 0x80 != 0, !map.isInImage(metadata) {
            // Generic metadata built at run time: its arguments must be metadata too.
            guard !resilientSuperclass, let header = u32(descriptor + 52) else { return false }
            let parameters = Int(header & 0xFFFF)
            guard parameters <= 16 else { return false }
            let arguments = metadata + UInt(positive - immediate) * 8
            for index in 0..<parameters {
                guard let argument = word(arguments + UInt(index) * 8), isTypeMetadata(argument, depth: depth + 1) else {
                    return false
                }
            }
        }
        let superclass = words[1]
        guard superclass == 0 || isClassMetadata(superclass, depth: depth + 1) else { return false }
        validClasses.insert(metadata)
        if !map.isInImage(metadata) { heapResident.append(metadata) }
        return true
    }

    /// Whether `metadata` is plausibly any type's metadata (for generic arguments).
    private func isTypeMetadata(_ metadata: UInt, depth: Int) -> Bool {
        guard depth < 8, metadata & 7 == 0, map.isReadable(metadata, length: 16), let kind = word(metadata) else { return false }
        switch kind {
        case 0:
            return isClassMetadata(metadata, depth: depth)
        case 0x200, 0x201, 0x202:
            // A struct, an enum, an optional: a value type descriptor in an image.
            guard let descriptor = word(metadata + 8), descriptor & 3 == 0, map.isInImage(descriptor),
                let flags = u32(descriptor), flags & 0x1F == 17 || flags & 0x1F == 18
            else { return false }
            guard flags & 0x80 != 0, !map.isInImage(metadata) else { return true }
            guard let header = u32(descriptor + 36) else { return false }
            let parameters = Int(header & 0xFFFF)
            guard parameters <= 16 else { return false }
            for index in 0..<parameters {
                guard let argument = word(metadata + 16 + UInt(index) * 8), isTypeMetadata(argument, depth: depth + 1) else {
                    return false
                }
            }
            return true
        case 0x300, 0x303, 0x306, 0x307:
            // Builtin, existential, existential metatype, extended existential.
            return true
        case 0x301:
            // A tuple: its count, its labels, then (type, offset) per element.
            guard let count = word(metadata + 8), count <= 64 else { return false }
            for index in 0..<Int(count) {
                guard let element = word(metadata + 24 + UInt(index) * 16), isTypeMetadata(element, depth: depth + 1) else {
                    return false
                }
            }
            return true
        case 0x302:
            // A function: flags (the parameter count in the low bits), the result, the parameters.
            guard let flags = word(metadata + 8), let result = word(metadata + 16), isTypeMetadata(result, depth: depth + 1)
            else { return false }
            let parameters = Int(flags & 0xFFFF)
            guard parameters <= 64 else { return false }
            for index in 0..<parameters {
                guard let parameter = word(metadata + 24 + UInt(index) * 8), isTypeMetadata(parameter, depth: depth + 1) else {
                    return false
                }
            }
            return true
        case 0x304:
            guard let instance = word(metadata + 8) else { return false }
            return isTypeMetadata(instance, depth: depth + 1)
        default:
            return false
        }
    }

    // MARK: Describing classes

    private func describeClass(_ metadata: UInt) -> Shape {
        let type = unsafeBitCast(metadata, to: Any.Type.self)
        let qualified = _typeName(type, qualified: true)
        let storage = classInfo(metadata, type: type)
        let generic = genericArguments(of: metadata)
        if qualified.hasPrefix("Swift._ContiguousArrayStorage<"), let element = generic.first {
            collections.append(CollectionInfo(storage: storage, key: nil, element: elementInfo(element)))
            return .array(collections.count - 1)
        }
        if qualified.hasPrefix("Swift._DictionaryStorage<"), generic.count >= 2 {
            collections.append(CollectionInfo(storage: storage, key: elementInfo(generic[0]), element: elementInfo(generic[1])))
            return .dictionary(collections.count - 1)
        }
        if qualified.hasPrefix("Swift._SetStorage<"), let element = generic.first {
            collections.append(CollectionInfo(storage: storage, key: nil, element: elementInfo(element)))
            return .set(collections.count - 1)
        }
        return .object(storage)
    }

    private func classInfo(_ metadata: UInt, type: Any.Type) -> Int {
        let instanceSize = Int(word(metadata + 24).map { $0 & 0xFFFF_FFFF } ?? 16)
        let fields = ReflectedFields.of(type)
        var scanned: [Range<Int>]? = instanceSize > 16 ? nil : []
        if let fields {
            var ranges: [Range<Int>] = []
            for field in fields where field.isStrong && Self.mayHoldReferences(field.type) {
                // Offsets come from the metadata: a field that does not fit is not read.
                guard field.offset >= 0, field.offset < instanceSize, field.size > 0, field.size <= instanceSize else { continue }
                let lower = max(16, field.offset)
                let upper = min(instanceSize, field.offset + field.size)
                guard lower < upper else { continue }
                let range = lower..<upper
                if let last = ranges.last, last.upperBound >= range.lowerBound {
                    ranges[ranges.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
                } else {
                    ranges.append(range)
                }
            }
            scanned = ranges
        }
        // A ManagedBuffer's elements follow the instance: scanned when their type may hold a
        // reference (its second generic argument).
        var scansTail = false
        // A bounded walk through superclasses checked as class metadata (the words are read
        // again here, and a chain must not lead the runtime into memory that is no metadata).
        var superclass = word(metadata &+ 8) ?? 0
        var depth = 0
        while superclass != 0, depth < 64, isClassMetadata(superclass, depth: 0) {
            depth += 1
            if _typeName(unsafeBitCast(superclass, to: Any.Type.self), qualified: true).hasPrefix("Swift.ManagedBuffer<") {
                let arguments = genericArguments(of: superclass)
                scansTail = arguments.count < 2 || Self.mayHoldReferences(arguments[1])
                break
            }
            superclass = word(superclass &+ 8) ?? 0
        }
        let first = planRanges.count
        planRanges += scanned ?? []
        plans.append(
            ClassPlan(
                instanceSize: instanceSize, scansAll: scanned == nil, scansTail: scansTail, first: first,
                count: planRanges.count - first))
        classes.append(
            ClassInfo(
                name: _typeName(type, qualified: false), instanceSize: instanceSize, scanned: scanned,
                fields: (fields ?? []).filter { $0.offset >= 0 && $0.offset < instanceSize && $0.size >= 0 && $0.size <= 1 << 24 }
                    .map { Field(name: $0.name, offset: $0.offset, size: $0.size, type: $0.type) },
                scansTail: scansTail))
        return classes.count - 1
    }

    /// The generic arguments of a (validated) class metadata.
    private func genericArguments(of metadata: UInt) -> [Any.Type] {
        guard let descriptor = word(metadata + 40), let flags = u32(descriptor), flags & 0x80 != 0,
            flags & (1 << (16 + 13)) == 0, let positive = u32(descriptor + 28), let immediate = u32(descriptor + 32),
            immediate <= positive, let header = u32(descriptor + 52)
        else { return [] }
        let arguments = metadata + UInt(positive - immediate) * 8
        return (0..<Int(min(header & 0xFFFF, 16))).compactMap { index in
            word(arguments + UInt(index) * 8).flatMap { $0 == 0 ? nil : unsafeBitCast($0, to: Any.Type.self) }
        }
    }

    private func elementInfo(_ type: Any.Type) -> ElementInfo {
        let layout = Self.layout(of: type)
        return ElementInfo(
            type: type, stride: max(1, layout.stride), alignment: max(1, layout.alignment), size: max(0, layout.size),
            scanned: Self.mayHoldReferences(type))
    }

    /// Whether values of `type` may hold a strong reference: anything that is not plain data,
    /// and the pointer types whose memory a value may own.
    static func mayHoldReferences(_ type: Any.Type) -> Bool {
        guard layout(of: type).isPOD else { return true }
        let name = _typeName(type, qualified: true)
        return name.contains("Swift.Unsafe") || name.contains("Swift.Unmanaged") || name.contains("Swift.OpaquePointer")
    }

    /// The size, stride, alignment and triviality of `type`.
    static func layout(of type: Any.Type) -> (size: Int, stride: Int, alignment: Int, isPOD: Bool) {
        func measure<T>(_: T.Type) -> (size: Int, stride: Int, alignment: Int, isPOD: Bool) {
            (MemoryLayout<T>.size, MemoryLayout<T>.stride, MemoryLayout<T>.alignment, _isPOD(T.self))
        }
        return _openExistential(type, do: measure)
    }

    // MARK: Reading

    /// The word at `address`: from the snapshot when it has it, else by a safe read of a
    /// readable mapping.
    func word(_ address: UInt) -> UInt? {
        if let copied = snapshot?.word(at: address) { return copied }
        guard address & 7 == 0, map.isReadable(address) else { return nil }
        return ProcessMemory.word(at: address)
    }

    private func words(_ address: UInt, count: Int) -> [UInt]? {
        var result: [UInt] = []
        result.reserveCapacity(count)
        for index in 0..<count {
            guard let value = word(address + UInt(index) * 8) else { return nil }
            result.append(value)
        }
        return result
    }

    private func u32(_ address: UInt) -> UInt32? {
        guard address & 3 == 0, let value = word(address & ~7) else { return nil }
        return UInt32(truncatingIfNeeded: address & 4 == 0 ? value : value >> 32)
    }
}
