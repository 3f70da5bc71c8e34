import NodesDebug
import NodesRetainers
import NodescopeWire
import Testing

#if canImport(Glibc)
import Glibc

/// A global that leads to a block of no known shape.
nonisolated(unsafe) var plantedPlainBlock: UnsafeMutableRawPointer?
/// What that block's first word points at: a global of this test binary, as a C++ object's first
/// word points at its virtual table.
nonisolated(unsafe) var plantedBlockKind: UInt = 7

extension RetainerAnalysisTests {
    /// A block of no known shape is named by its size and, when its first word points into an
    /// image, by what it points at (a virtual table, a function, a runtime structure): the
    /// holder a report shows then says whose memory it is.
    @Test func aBlockOfNoKnownShapeIsNamedByWhatItsFirstWordPointsAt() throws {
        let target = StaleTarget()
        let block = try #require(malloc(200))
        memset(block, 0, 200)
        let kind = withUnsafeMutablePointer(to: &plantedBlockKind) { UInt(bitPattern: $0) }
        block.storeBytes(of: kind, as: UInt.self)
        block.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque()), toByteOffset: 96, as: UInt.self)
        plantedPlainBlock = block
        defer {
            plantedPlainBlock = nil
            free(block)
        }
        let held = try #require(
            analysis().explain([RetainerAnalysis.Target(target, nodeID: 6, objectIndex: 0)], attached: [], detached: []).first)
        #expect(held.verdict == .holder, "\(lines(held))")
        let hop = try #require(held.hops.first { $0.holderKind == .unknownMemory }, "\(lines(held))")
        #expect(hop.holder.hasSuffix("-byte heap block beginning with NodesRetainersTests.plantedBlockKind"), "\(lines(held))")
        #expect(hop.reference == "+96", "\(lines(held))")
        withExtendedLifetime(target) {}
    }
}
#endif
