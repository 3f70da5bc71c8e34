import NodesDebug
import NodesRetainers
import NodesTracking
import NodescopeWire
import Testing

#if canImport(Glibc)
import Glibc

/// A generic superclass: a class that inherits from one of its specializations gets its metadata
/// completed at run time, through a singleton metadata initialization cache (`Ml`).
class GenericallyBased<Value> {
    var value: Value?
}

/// The class whose `Ml` cache the test reads.
final class LateCompletedChild: GenericallyBased<Int> {}

extension RetainerAnalysisTests {
    /// The `Ml` cache of `type`. The cache is a local symbol; the class's nominal type descriptor
    /// (at +40 of its metadata) points at it: a class descriptor with singleton metadata
    /// initialization (and no generic context, resilient superclass or foreign initialization
    /// before it) has, after its 11 fixed 32-bit fields, a relative pointer to it.
    static func singletonMetadataCache(of type: AnyClass) -> UnsafeRawPointer? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        guard let descriptor = metadata.load(fromByteOffset: 40, as: UnsafeRawPointer?.self) else { return nil }
        let flags = descriptor.load(as: UInt32.self)
        let isClass = flags & 0x1F == 16
        let isGeneric = flags & 0x80 != 0
        let hasSingletonInitialization = (flags >> 16) & 0x3 == 1
        let hasResilientSuperclass = (flags >> 16) & 0x2000 != 0
        guard isClass, !isGeneric, hasSingletonInitialization, !hasResilientSuperclass else { return nil }
        let field = descriptor + 44
        return field + Int(field.load(as: Int32.self))
    }

    /// A class's singleton metadata initialization cache (`…Ml`, in the image's data) points at the
    /// runtime's entry for it, a heap block (the tracking state and the metadata). A loaded run
    /// met `type metadata singleton initialization cache for PlainFlow +8 → a 24-byte heap block
    /// +16 → the object`: most likely the block's last word, past the 16-byte entry, left from the
    /// block's earlier use. The runtime's caches hold no object of the program, so the cache is no
    /// root: the entry it points at is held by nothing the analysis reports.
    @Test func aSingletonMetadataInitializationCacheHoldsNothing() throws {
        let child = LateCompletedChild()
        child.value = 1
        let cache = try #require(Self.singletonMetadataCache(of: LateCompletedChild.self))
        let entry = cache.load(fromByteOffset: 8, as: UInt.self)
        try #require(entry != 0, "the runtime made the cache's entry when it completed the metadata")
        let frames = analysis().explain(
            [RetainerAnalysis.Target(nodeID: 4, objectIndex: 0, address: ObfuscatedAddress(address: entry))],
            attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(!lines(frame).contains { $0.contains("singleton initialization cache") }, "\(lines(frame))")
        #expect(noStructureHolds(frame), "\(frame.verdict): \(lines(frame))")
        withExtendedLifetime(child) {}
    }
}
#endif
