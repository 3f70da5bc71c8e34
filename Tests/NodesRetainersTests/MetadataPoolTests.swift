import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

#if canImport(Glibc)
import Glibc

extension RetainerAnalysisTests {
    /// The free part of the Swift metadata allocator's current pool: the range the runtime
    /// exports for heap tools (`_swift_debug_allocationPoolPointer`), as it is now.
    static func metadataPoolFree() -> UnsafeMutableRawBufferPointer? {
        guard let symbol = dlsym(nil, "_swift_debug_allocationPoolPointer") else { return nil }
        let pool = symbol.load(as: UnsafeMutableRawPointer?.self)
        guard let pool, let begin = pool.load(as: UnsafeMutableRawPointer?.self) else { return nil }
        let remaining = pool.load(fromByteOffset: 8, as: Int.self)
        return UnsafeMutableRawBufferPointer(start: begin, count: remaining)
    }

    /// What the metadata allocator's current pool holds past its allocations is what the memory
    /// held before the runtime took it: a stale word there (found as the last hop of
    /// `metadata instantiation cache for … → a 16392-byte heap block +288 → CycleBack`) is no
    /// reference. Planted here at the end of the free part, which the runtime writes only when it
    /// allocates that far (and then overwrites).
    @Test func aWordInTheMetadataAllocatorsFreePoolIsNoReference() throws {
        let target = StaleTarget()
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        let free = try #require(Self.metadataPoolFree(), "the runtime exports its metadata pool")
        try #require(free.count >= 64)
        let slot = (free.count - 16) & ~7
        free.storeBytes(of: address, toByteOffset: slot, as: UInt.self)
        let frames = analysis().explain([RetainerAnalysis.Target(target, nodeID: 3, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(noStructureHolds(frame), "\(frame)")
        withExtendedLifetime(target) {}
    }
}
#endif
