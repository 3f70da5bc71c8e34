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

    /// The free part of the metadata pool, made at least `bytes` long: what other tests left of
    /// the current pool may be less (56 bytes once, in a loaded run), so new metadata is made,
    /// a generic type one level deeper each time, until the runtime starts a new pool.
    static func metadataPoolFree(atLeast bytes: Int) -> UnsafeMutableRawBufferPointer? {
        var type: Any.Type = MetadataLevel<StaleTarget>.self
        for _ in 0..<100_000 {
            guard let free = metadataPoolFree() else { return nil }
            if free.count >= bytes { return free }
            type = oneLevelDeeper(type)
        }
        return nil
    }

    private static func oneLevelDeeper(_ type: Any.Type) -> Any.Type {
        func deeper<T>(_: T.Type) -> Any.Type { MetadataLevel<T>.self }
        return _openExistential(type, do: deeper)
    }

    /// What the metadata allocator's current pool holds past its allocations is what the memory
    /// held before the runtime took it: a stale word there (found as the last hop of
    /// `metadata instantiation cache for … → a 16392-byte heap block +288 → CycleBack`) is no
    /// reference. Planted here at the end of the free part, which the runtime writes only when it
    /// allocates that far (and then overwrites).
    @Test func aWordInTheMetadataAllocatorsFreePoolIsNoReference() throws {
        let target = StaleTarget()
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        let free = try #require(Self.metadataPoolFree(atLeast: 64), "the runtime exports its metadata pool, and starts a new one")
        let slot = (free.count - 16) & ~7
        free.storeBytes(of: address, toByteOffset: slot, as: UInt.self)
        let frames = analysis().explain([RetainerAnalysis.Target(target, nodeID: 3, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(noStructureHolds(frame), "\(frame)")
        withExtendedLifetime(target) {}
    }
}

/// A generic type of no size, for metadata made on demand: `MetadataLevel<MetadataLevel<…>>`.
private struct MetadataLevel<T> {}
#endif
