import Foundation
import Testing

@testable import NodesRetainers

/// The heap index counts the blocks that start before an address with one instruction where the
/// processor has it: the count must be the language's, word for word.
@Suite struct BitCountTests {
    @Test func theInstructionCountsAsTheLanguageDoes() {
        var words: [UInt64] = [0, 1, .max, 1 << 63, 0x5555_5555_5555_5555, 0xAAAA_AAAA_AAAA_AAAA, 0x8000_0000_0000_0001]
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<10_000 { words.append(generator.next()) }
        // Sparse and dense words, as a bitmap of block starts has them.
        for shift in 0..<64 { words.append((UInt64(1) << UInt64(shift)) &- 1) }
        let inOne = ProcessMemory.countsBitsInOne()
        for word in words {
            #expect(ProcessMemory.bitCount(word, inOne: inOne) == word.nonzeroBitCount, "\(word)")
            #expect(ProcessMemory.bitCount(word, inOne: false) == word.nonzeroBitCount, "\(word)")
        }
    }

    #if os(Linux) && arch(x86_64)
    /// Every x86-64 processor since 2008 has the instruction: a machine without it would take the
    /// slower count, which the test above checks too.
    @Test func thisMachineCountsInOneInstruction() throws {
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let flags = cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") }.map { $0.split(separator: " ") } ?? []
        #expect(ProcessMemory.countsBitsInOne() == flags.contains("popcnt"))
    }
    #endif
}
