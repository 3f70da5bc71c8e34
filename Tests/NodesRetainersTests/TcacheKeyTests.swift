import Testing

@testable import NodesRetainers

#if canImport(Glibc)
import Glibc

/// The key of glibc's per-thread cache of freed blocks, which tells a cached block (free) from
/// one in use: found even when the thread's bins are full, as in a busy process.
@Suite("Heap index: the thread cache's key")
struct TcacheKeyTests {
    @Test func theKeyIsFoundWhenTheBinsOfItsSizesAreFull() throws {
        // Fill this thread's bins of the probe's two sizes: 8 blocks of each taken (the bin
        // emptied), then freed: 7 fill the bin, and the last, freed into a full bin, goes to a fast
        // bin instead, with no key in its second word. (Whether glibc did so is not checked here:
        // beside parallel tests, something else on this thread may take from a bin meanwhile.)
        for size in [24, 72] {
            let blocks = (0...HeapIndex.tcacheBinCapacity).compactMap { _ in malloc(size) }
            try #require(blocks.count == HeapIndex.tcacheBinCapacity + 1)
            blocks.forEach { memset($0, 0, size) }
            blocks.forEach { free($0) }
        }
        let key = try #require(HeapIndex.probeTcacheKey(), "the probe found the key with full bins")
        // The same key as the process's, found once (the bins were as they were then).
        if let known = HeapIndex.tcacheKey { #expect(known == key) }
    }

    /// The arena's free lists hold many blocks of the probe's sizes, as in a busy process: as
    /// the allocator serves this thread, it refills the thread's bins from them, and a block
    /// freed here can then go to a full bin, with no key. The probe frees its blocks on a thread
    /// of its own, whose cache starts empty.
    @Test func theKeyIsFoundWhenTheArenasFreeListsRefillTheBins() throws {
        for size in [24, 72] {
            let blocks = (0..<64).compactMap { _ in malloc(size) }
            blocks.forEach { free($0) }
        }
        let key = try #require(HeapIndex.probeTcacheKey(), "the probe found the key beside full free lists")
        if let known = HeapIndex.tcacheKey { #expect(known == key) }
    }
}
#endif
