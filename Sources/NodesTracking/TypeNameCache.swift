import Synchronization

/// The display names of types, each demangled once per process and then read without a lock:
/// an open-addressing table of type pointers whose names are written before their key is
/// published. A full table (more types than slots) falls back to a locked dictionary.
final class TypeNameCache: @unchecked Sendable {
    // Unchecked because the names sit in raw storage: a name is written once, under `writer`,
    // before its key's release store, and never changed or freed while the cache lives.
    private static let slotCount = 4_096
    private let keys: UnsafeMutablePointer<Atomic<UInt>>
    private let names: UnsafeMutablePointer<String>
    private let writer = Mutex<[ObjectIdentifier: String]>([:])
    /// What the cache makes of a type's name before keeping it.
    private let transform: @Sendable (String) -> String

    /// The cache of the process.
    static let shared = TypeNameCache { $0 }

    /// The names that nodes take by default: their principal type's, without a trailing `Imp`
    /// (the convention for implementation classes).
    static let nodeNames = TypeNameCache { $0.hasSuffix("Imp") ? String($0.dropLast(3)) : $0 }

    private init(transform: @escaping @Sendable (String) -> String) {
        self.transform = transform
        keys = .allocate(capacity: Self.slotCount)
        // Zeroed: the slots not written yet would otherwise hold a freed block's words, which the
        // retainer analysis, scanning this block of no known shape word by word, takes for
        // references (a test's object was once reported held by this cache).
        let bytes = Self.slotCount * MemoryLayout<String>.stride
        let raw = UnsafeMutableRawPointer.allocate(byteCount: bytes, alignment: MemoryLayout<String>.alignment)
        raw.initializeMemory(as: UInt8.self, repeating: 0, count: bytes)
        names = raw.bindMemory(to: String.self, capacity: Self.slotCount)
        for index in 0..<Self.slotCount { (keys + index).initialize(to: Atomic(0)) }
    }

    /// The name of `type`, as `String(describing:)` writes it (and the cache's transform makes
    /// of it).
    @inline(__always)
    func name(of type: AnyObject.Type) -> String {
        let bits = UInt(bitPattern: Int(bitPattern: unsafeBitCast(type, to: UnsafeRawPointer.self)))
        var slot = Self.slot(of: bits)
        for _ in 0..<8 {
            let found = keys[slot].load(ordering: .acquiring)
            if found == bits { return names[slot] }
            if found == 0 { break }
            slot = (slot &+ 1) & (Self.slotCount - 1)
        }
        return insert(type, bits: bits)
    }

    private func insert(_ type: AnyObject.Type, bits: UInt) -> String {
        writer.withLock { overflow in
            var slot = Self.slot(of: bits)
            for _ in 0..<8 {
                let found = keys[slot].load(ordering: .acquiring)
                if found == bits { return names[slot] }
                if found == 0 {
                    let name = transform(String(describing: type))
                    (names + slot).initialize(to: name)
                    keys[slot].store(bits, ordering: .releasing)
                    return name
                }
                slot = (slot &+ 1) & (Self.slotCount - 1)
            }
            if let name = overflow[ObjectIdentifier(type)] { return name }
            let name = transform(String(describing: type))
            overflow[ObjectIdentifier(type)] = name
            return name
        }
    }

    @inline(__always)
    private static func slot(of bits: UInt) -> Int {
        // Fibonacci hashing of the pointer (its low bits are alignment).
        Int(truncatingIfNeeded: (UInt64(bits) &* 0x9E37_79B9_7F4A_7C15) >> 52) & (slotCount - 1)
    }
}
