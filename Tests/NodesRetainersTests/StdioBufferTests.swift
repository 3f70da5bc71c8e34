import NodesRetainers
import NodescopeWire
import Testing

#if canImport(Glibc)
import Glibc
#endif

extension RetainerAnalysisTests {
    /// A C stream's buffer holds bytes, never a reference, and malloc gives it uncleared: past
    /// the bytes in use it keeps a freed block's words. An open stream (reached from glibc's
    /// `_IO_list_all`) whose buffer holds an object's address there is no holder of the object.
    /// Once seen in a full test run (`_IO_list_all → a 472-byte heap block +8 → a 4104-byte heap
    /// block +2696`).
    @Test func aStreamsBufferThatKeepsAnAddressIsNoHolder() throws {
        let object = CachedProfile()
        let path = "/tmp/nodescope-stdio-\(getpid())"
        defer { unlink(path) }
        let stream = try #require(fopen(path, "w+"))
        defer { fclose(stream) }
        // The buffer is this test's block, set as the stream's, with a few bytes written through
        // it and the object's address far past them (as a freed block's word would lie there).
        let size = 4_096
        let buffer = try #require(malloc(size))
        defer { free(buffer) }
        memset(buffer, 0, size)
        try #require(setvbuf(stream, buffer.assumingMemoryBound(to: CChar.self), _IOFBF, size) == 0)
        try #require(fputs("a few bytes", stream) >= 0)
        buffer.storeBytes(of: UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), toByteOffset: 2_696, as: UInt.self)
        let frames = analysis().explain([RetainerAnalysis.Target(object, nodeID: 12, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(!lines(frame).contains { $0.hasPrefix("_IO_list_all") }, "\(frame.verdict): \(lines(frame))")
        #expect(noStructureHolds(frame), "\(frame.verdict): \(lines(frame))")
        withExtendedLifetime(object) {}
    }
}
