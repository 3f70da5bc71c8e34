/// An array in chunks of a fixed size that are never moved: growing it adds a chunk instead of
/// copying everything into a buffer twice as large, so a big registry leaves no freed old
/// buffers behind (memory a process keeps) and never copies its records to grow.
///
/// A copy shares the chunks: changing a copy copies only the chunks it changes (the tracker
/// copies its registry under its lock to read it outside, and goes on changing its own).
///
/// The registry reads and writes its records many times per change, so an access costs as
/// little as it can: the table keeps its chunks' element pointers in raw memory (a read is two
/// loads, with no array or object in between), and whether each chunk is its own alone (a write
/// costs one uniqueness check of the table and a flag). A table found shared is cloned, and
/// every chunk it shares is marked shared in both tables, so that neither side writes it in
/// place again.
struct ChunkedArray<Element: BitwiseCopyable & Sendable>: @unchecked Sendable {
    // Unchecked because the chunks are raw storage: a chunk is written only through a table
    // that owns it alone, and a table only through a value that holds it alone.
    private static var shift: Int { 12 }
    /// Elements per chunk.
    static var chunkSize: Int { 1 << shift }

    /// A chunk's memory, freed with the last table that holds it.
    private final class Chunk {
        let base: UnsafeMutablePointer<Element>

        init() {
            base = Self.zeroedChunk()
        }

        init(copying other: Chunk, count: Int) {
            base = Self.zeroedChunk()
            base.update(from: other.base, count: count)
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
        /// The chunks, which this table keeps alive.
        @exclusivity(unchecked) private(set) var chunks: [Chunk] = []
        /// Each chunk's elements, in raw memory (`capacity` entries).
        @exclusivity(unchecked) private(set) var bases: UnsafeMutablePointer<UnsafeMutablePointer<Element>>
        /// Whether each chunk is this table's alone, to be written in place.
        @exclusivity(unchecked) private(set) var owned: UnsafeMutablePointer<Bool>
        @exclusivity(unchecked) private var capacity: Int

        init() {
            capacity = 4
            (bases, owned) = Self.allocate(4)
        }

        /// A table with the chunks of `other`, shared: marked so in both.
        init(sharing other: Table) {
            capacity = Swift.max(4, other.chunks.count)
            (bases, owned) = Self.allocate(capacity)
            chunks = other.chunks
            bases.update(from: other.bases, count: chunks.count)
            other.owned.update(repeating: false, count: chunks.count)
        }

        deinit {
            bases.deallocate()
            owned.deallocate()
        }

        /// Room for `capacity` chunks, zeroed (see `zeroedChunk()`: no stale word in the
        /// unused part looks like a reference).
        private static func allocate(
            _ capacity: Int
        ) -> (UnsafeMutablePointer<UnsafeMutablePointer<Element>>, UnsafeMutablePointer<Bool>) {
            let bases = UnsafeMutableRawPointer.allocate(
                byteCount: capacity * MemoryLayout<UnsafeMutablePointer<Element>>.stride,
                alignment: MemoryLayout<UnsafeMutablePointer<Element>>.alignment)
            bases.initializeMemory(
                as: UInt8.self, repeating: 0, count: capacity * MemoryLayout<UnsafeMutablePointer<Element>>.stride)
            let owned = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
            owned.initialize(repeating: false, count: capacity)
            return (bases.bindMemory(to: UnsafeMutablePointer<Element>.self, capacity: capacity), owned)
        }

        func append(_ chunk: Chunk) {
            if chunks.count == capacity {
                let grown = capacity * 2
                let (newBases, newOwned) = Self.allocate(grown)
                newBases.update(from: bases, count: chunks.count)
                newOwned.update(from: owned, count: chunks.count)
                bases.deallocate()
                owned.deallocate()
                (bases, owned, capacity) = (newBases, newOwned, grown)
            }
            bases[chunks.count] = chunk.base
            owned[chunks.count] = true
            chunks.append(chunk)
        }

        /// Puts a copy of chunk `index`, holding its first `count` elements, in its place, this
        /// table's alone; returns its elements.
        func copyChunk(_ index: Int, count: Int) -> UnsafeMutablePointer<Element> {
            let copy = Chunk(copying: chunks[index], count: count)
            chunks[index] = copy
            bases[index] = copy.base
            owned[index] = true
            return copy.base
        }
    }

    private var table = Table()
    private(set) var count = 0
    /// Whether this value's holder promised that its table is its own alone: that the value is
    /// never copied but through ``readingCopy()`` (``holdTableAlone()``). A write then asks
    /// nothing of the table's reference count, only whether the chunk is the table's own.
    private var holdsTableAlone = false

    /// The element at `position`.
    subscript(position: Int) -> Element {
        @inline(__always) get {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            return table.bases[position >> Self.shift][position & (Self.chunkSize - 1)]
        }
        @inline(__always) _modify {
            precondition(position >= 0 && position < count, "ChunkedArray index out of range")
            yield &writableBase(position >> Self.shift)[position & (Self.chunkSize - 1)]
        }
    }

    /// Where elements `position..<position + length` may be written in place, when they lie in
    /// one chunk (else nil). The pointer is valid while this value is changed through it alone:
    /// any other change, or a copy of the value, may move the elements.
    @inline(__always)
    mutating func writableRun(at position: Int, length: Int) -> UnsafeMutablePointer<Element>? {
        let offset = position & (Self.chunkSize - 1)
        guard position >= 0, length > 0, length <= count - position, offset + length <= Self.chunkSize else {
            return nil
        }
        return writableBase(position >> Self.shift) + offset
    }

    /// Appends `element`.
    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 {
            makeTableUnique()
            table.append(Chunk())
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

    /// Makes the table this value's own, and from now on writes it without asking whether it
    /// is shared: for a holder that never copies the value but through ``readingCopy()`` (the
    /// tracker's registry, written once or more for every change an app makes). A debug build
    /// checks the promise at every write.
    mutating func holdTableAlone() {
        makeTableUnique()
        holdsTableAlone = true
    }

    /// A copy that shares this value's chunks but not its table: the chunks are marked shared on
    /// both sides (each side copies a chunk before writing it), and each side's table is its own.
    /// The copy is an ordinary value (it asks at every write, as ``holdTableAlone()`` was never
    /// called on it).
    mutating func readingCopy() -> ChunkedArray {
        var copy = self
        copy.table = Table(sharing: table)
        copy.holdsTableAlone = false
        return copy
    }

    /// Where chunk `index`'s elements may be written: the chunk is this value's alone.
    @inline(__always)
    private mutating func writableBase(_ index: Int) -> UnsafeMutablePointer<Element> {
        if !holdsTableAlone {
            if !isKnownUniquelyReferenced(&table) { cloneTable() }
        } else {
            assert(isKnownUniquelyReferenced(&table), "a ChunkedArray held alone was copied")
        }
        if table.owned[index] { return table.bases[index] }
        return copyChunk(index)
    }

    private mutating func makeTableUnique() {
        if !isKnownUniquelyReferenced(&table) { cloneTable() }
    }

    @inline(never)
    private mutating func cloneTable() {
        table = Table(sharing: table)
    }

    @inline(never)
    private mutating func copyChunk(_ index: Int) -> UnsafeMutablePointer<Element> {
        table.copyChunk(index, count: min(Self.chunkSize, count - index << Self.shift))
    }
}
