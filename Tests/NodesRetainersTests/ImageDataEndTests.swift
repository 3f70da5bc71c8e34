import NodesDebug
import NodescopeWire
import Testing

@testable import NodesRetainers
@testable import NodesTracking

#if canImport(Glibc)
import Glibc

extension RetainerAnalysisTests {
    /// Memory mapped right after an image's writable data is not the image's: an anonymous mapping
    /// made later can sit there (or be merged by the kernel onto the `.bss`), and a loaded run once
    /// reported `a global of libpcre2-8.so +0x9ee6f8`, 10 MB into a library of 629 KB. A page
    /// mapped there that holds the object's address is no global.
    @Test func aMappingMadeRightAfterAnImagesDataIsNoGlobal() throws {
        let target = StaleTarget()
        let address = UInt(bitPattern: Unmanaged.passUnretained(target).toOpaque())
        let page = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let mappings = try #require(MemoryMap.read()).mappings
        // An image (one whose globals are roots) whose writable data ends where nothing is mapped.
        var planted: (start: UnsafeMutableRawPointer, image: String)?
        for (index, mapping) in mappings.enumerated() where planted == nil {
            guard mapping.writable, mapping.inode != 0, !MemorySnapshot.holdsNoSwiftObject(image: mapping.path),
                mappings.contains(where: { $0.path == mapping.path && $0.executable })
            else { continue }
            var end = mapping.end
            if index + 1 < mappings.count, mappings[index + 1].start == end, mappings[index + 1].isAnonymous,
                mappings[index + 1].writable
            {
                end = mappings[index + 1].end  // its .bss
            }
            guard !mappings.contains(where: { $0.start < end + 4 * page && $0.end > end }) else { continue }
            let wanted = UnsafeMutableRawPointer(bitPattern: end)
            let got = mmap(wanted, Int(4 * page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
            guard let got, got != MAP_FAILED else { continue }
            guard got == wanted else {
                munmap(got, Int(4 * page))
                continue
            }
            planted = (got, mapping.path)
        }
        let (start, image) = try #require(planted, "an image whose data is followed by a free page")
        defer { munmap(start, Int(4 * page)) }
        start.storeBytes(of: address, toByteOffset: Int(page) + 40, as: UInt.self)
        // The page is listed in the image's data mapping, or right after it, as an anonymous one.
        let after = try #require(MemoryMap.read()).mappings
        let holding = try #require(after.first { $0.start <= UInt(bitPattern: start) && UInt(bitPattern: start) < $0.end })
        #expect(holding.isAnonymous || holding.path == image)

        let frames = analysis().explain([RetainerAnalysis.Target(target, nodeID: 8, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(noStructureHolds(frame), "\(frame.verdict): \(lines(frame)) (a page after \(image))")
        withExtendedLifetime(target) {}
    }
}
#endif
