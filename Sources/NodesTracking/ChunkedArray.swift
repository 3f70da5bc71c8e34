/// An array in chunks of a fixed size that are never moved: growing it adds a chunk instead of
/// copying everything into a buffer twice as large, so a big registry leaves no freed old
/// buffers behind (memory a process keeps) and never copies its records to grow.
///
/// A copy shares the chunks (each is a copy-on-write array): changing a copy copies only the
/// chunks it changes.
struct ChunkedArray<Element: Sendable>: Sendable {
    private static var shift: Int { 12 }
    /// Elements per chunk.
    static var chunkSize: Int { 1 << shift }
    private var chunks: [[Element]] = []
    private(set) var count = 0

    /// The element at `position`.
    subscript(position: Int) -> Element {
        @inline(__always) get { chunks[position >> Self.shift][position & (Self.chunkSize - 1)] }
        @inline(__always) _modify { yield &chunks[position >> Self.shift][position & (Self.chunkSize - 1)] }
    }

    /// Appends `element`.
    mutating func append(_ element: Element) {
        if count & (Self.chunkSize - 1) == 0 {
            var chunk: [Element] = []
            chunk.reserveCapacity(Self.chunkSize)
            chunks.append(chunk)
        }
        chunks[count >> Self.shift].append(element)
        count += 1
    }

    /// Appends `element` `count` times.
    mutating func append(_ element: Element, count: Int) {
        for _ in 0..<count { append(element) }
    }
}
