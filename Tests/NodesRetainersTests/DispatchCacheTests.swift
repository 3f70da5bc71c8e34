import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

#if canImport(Glibc)
import Glibc

/// A global that leads to continuations laid out as libdispatch's cache keeps them.
nonisolated(unsafe) var plantedContinuationCache: UnsafeMutableRawPointer?

extension RetainerAnalysisTests {
    /// libdispatch keeps freed continuations in a per-thread cache for reuse; their words are left
    /// from their last use (the context of a block long run, at +40), and a stale one there made a
    /// path `thread stack → a 72-byte heap block +16 → … → a 72-byte heap block +40 → …`. A cached
    /// continuation is recognised by its chain (`do_next` at +16, a count at +8 that goes down to
    /// 1 at the last) and holds nothing; the same blocks out of that order are scanned as any.
    @Test func aContinuationInDispatchsCacheIsNoReference() throws {
        let target = StaleTarget()
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        var blocks: [UnsafeMutableRawPointer] = []
        var next: UnsafeMutableRawPointer?
        for count in 1...3 {
            // A 64-byte request gets a 72-byte block, or an 88-byte one when glibc hands over a
            // 96-byte chunk whole (one CI run's head block): an 80-byte request always does.
            let continuation = try #require(malloc(count == 3 ? 80 : 64))
            memset(continuation, 0, 64)
            continuation.storeBytes(of: UInt32(count), toByteOffset: 8, as: UInt32.self)
            continuation.storeBytes(of: next, toByteOffset: 16, as: UnsafeMutableRawPointer?.self)
            continuation.storeBytes(of: address, toByteOffset: 40, as: UInt.self)
            blocks.append(continuation)
            next = continuation
        }
        plantedContinuationCache = next
        defer {
            plantedContinuationCache = nil
            blocks.forEach { free($0) }
        }
        let cached = try #require(
            analysis().explain([RetainerAnalysis.Target(target, nodeID: 5, objectIndex: 0)], attached: [], detached: []).first)
        #expect(noStructureHolds(cached), "\(cached.verdict): \(lines(cached))")

        // Counts that do not go down: not the cache, and the global holds the object through them.
        blocks.last?.storeBytes(of: UInt32(9), toByteOffset: 8, as: UInt32.self)
        let held = try #require(
            analysis().explain([RetainerAnalysis.Target(target, nodeID: 5, objectIndex: 0)], attached: [], detached: []).first)
        #expect(held.verdict == .holder, "\(lines(held))")
        #expect(held.hops.first?.holder.contains("plantedContinuationCache") == true, "\(lines(held))")
        withExtendedLifetime(target) {}
    }
}
#endif
