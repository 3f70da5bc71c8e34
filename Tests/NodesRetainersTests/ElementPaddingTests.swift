import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

/// A value with padding in an array: 17 bytes used of a stride of 24.
struct PaddedEntry {
    var title: String
    var flag: UInt8
}

/// An object that keeps such values.
final class PaddedHistory {
    var entries: [PaddedEntry] = []
}

/// An object that nothing holds but a stale word.
final class StaleTarget {}

extension RetainerAnalysisTests {
    /// The bytes past an element's size are padding that nothing writes: a stale word of a freed
    /// block that lies there (here, the address of an object written into it) is no reference.
    /// Found under load, where a worker read as held by `HeadlessViewController .history[2]`.
    @Test func aWordInAnElementsPaddingIsNoReference() throws {
        #expect(MemoryLayout<PaddedEntry>.size == 17 && MemoryLayout<PaddedEntry>.stride == 24)
        let history = PaddedHistory()
        let target = StaleTarget()
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        // The word at 16 of the second element: the flag byte, then 7 bytes of padding.
        history.entries = [PaddedEntry(title: "a", flag: 0), PaddedEntry(title: "b", flag: UInt8(truncatingIfNeeded: address))]
        history.entries.withUnsafeMutableBytes { bytes in
            bytes.storeBytes(of: address, toByteOffset: MemoryLayout<PaddedEntry>.stride + 16, as: UInt.self)
        }
        let frames = analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 3, objectIndex: 0)],
            attached: [RetainerAnalysis.NodeObject(history, nodeID: 30)], detached: [])
        let frame = try #require(frames.first)
        #expect(!frame.hops.contains { $0.reference.contains(".entries") }, "\(frame)")
        #expect(noStructureHolds(frame), "\(frame)")
        withExtendedLifetime((history, target)) {}
    }
}
