import Synchronization

/// An array in chunks of a fixed size that are never moved: growing it adds a chunk instead of
/// copying everything into a buffer twice as large, so a big registry leaves no freed old
/// buffers behind (memory a process keeps) and never copies its records to grow.
///
/// A copy shares the chunks: changing a copy copies only the chunks it changes (the tracker
/// copies its registry under its lock to read it outside, and goes on changing its own).
///
/// The registry reads and writes its records many times per change, so an access costs one
/// uniqueness check of the table and a comparison, not a check of two nested arrays: the table
/// has an owner stamp, and a chunk whose stamp is its table's belongs to that table alone. A
/// table found shared is cloned with a new stamp, and every chunk it shares is marked shared
/// (stamp 0) so that neither side writes it in place again.
struct ChunkedArray<Element: BitwiseCopyable & Sendable>: @unchecked Sendable {
    // Unchecked because the chunks are raw storage: a chunk is written only through a table
    // that owns it (its stamp), and a table only through a value that holds it alone.
    private static var shift: Int { 12 }
    /// Elements per chunk.
    static var chunkSize: Int { 1 << shift }

    private final class Chunk {
        let base: UnsafeMutablePointer<Element>
        /// The stamp of the table that may write it in place; 0 once shared.
        @exclusivity(unchecked) var owner: UInt

        init(owner: UInt) {
            base = Self.zeroedChunk()
            self.owner = owner
        }

        init(copying other: Chunk, count: Int, owner: UInt) {
            base = Self.zeroedChunk()
            base.update(from: other.base, count: count)
            self.owner = owner
        }

        /// A chunk's memory, zeroed: a block's earlier bytes (a freed object's words) would
        /// otherwise lie past the elements, where the retainer analysis scans this block of no
        /// known shape word by word and takes them for references.
        private static func zeroedChunk() -> UnsafeMutablePointer<Element> {
            let base = UnsafeMutablePointer<Element>.allocate(capacity: ChunkedArray.chunkSize)
            UnsafeMutableRawPointer(base).initializeMemory(
                as: UInt8.self, repeating: 0, count: ChunkedArray.chunkSize * MemoryLayout<Element>.stride)
            return base
        }

        deinit { base.deallocate() }
    }

    private final class Table {
        /// Unique among live tables: the address of a fresh allocation would be reused, so a
        /// counter.
        let stamp: UInt
        @exclusivity(unchecked) var chunks: [Chunk] = []

        init() {
            stamp = chunkTableStamps.wrappingAdd(1, ordering: .relaxed).newValue
        }
    }

    private var table = Table()
    private(set) var count = 0

    /// The element at `position`.
    subscript(position: Int) -> Element {
        @inline(__always) get {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            return table.chunks[position >> Self.shift].base[position & (Self.chunkSize - 1)]
        }
        @inline(__always) _modify {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            yield &writableBase(position >> Self.shift)[position & (Self.chunkSize - 1)]
        }
    }

    /// Appends `element`.
    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 {
            makeTableUnique()
            table.chunks.append(Chunk(owner: table.stamp))
        }
        let index = count
        let base = writableBase(index >> Self.shift)
        (base + (index & (Self.chunkSize - 1))).initialize(to: element)
        count += 1
    }

    /// Appends `element` `count` times.
    mutating func append(_ element: Element, count: Int) {
        for _ in 0..<count { append(element) }
    }

    /// Where chunk `index`'s elements may be written: the chunk is this value's alone.
    @inline(__always)
    private mutating func writableBase(_ index: Int) -> UnsafeMutablePointer<Element> {
        if !isKnownUniquelyReferenced(&table) { cloneTable() }
        let chunk = table.chunks[index]
        if chunk.owner == table.stamp { return chunk.base }
        return copyChunk(index)
    }

    private mutating func makeTableUnique() {
        if !isKnownUniquelyReferenced(&table) { cloneTable() }
    }

    @inline(never)
    private mutating func cloneTable() {
        let clone = Table()
        clone.chunks = table.chunks
        for chunk in clone.chunks { chunk.owner = 0 }
        table = clone
    }

    @inline(never)
    private mutating func copyChunk(_ index: Int) -> UnsafeMutablePointer<Element> {
        let used = min(Self.chunkSize, count - index << Self.shift)
        let copy = Chunk(copying: table.chunks[index], count: used, owner: table.stamp)
        table.chunks[index] = copy
        return copy.base
    }
}

/// The last stamp given to a chunk table (see ``ChunkedArray``): 0 is never given.
private let chunkTableStamps = Atomic<UInt>(0)
