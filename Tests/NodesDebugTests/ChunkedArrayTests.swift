import SeededRandom
import Testing

@testable import NodesTracking

@Suite("ChunkedArray: chunks shared by copies, written in place only when a value's own")
struct ChunkedArrayTests {
    @Test func aCopyKeepsItsElementsWhileEitherSideChanges() {
        let size = ChunkedArray<Int>.chunkSize
        var original = ChunkedArray<Int>()
        for value in 0..<(size * 2 + 10) { original.append(value) }
        var copy = original
        // The original changes a chunk both share, and grows into a new one.
        original[5] = -5
        original[size + 1] = -1
        original.append(999)
        // The copy changes another shared chunk, and the last one, which it shares too.
        copy[size * 2 + 3] = -3
        copy.append(111)
        #expect(original[5] == -5 && original[size + 1] == -1 && original[size * 2 + 3] == size * 2 + 3)
        #expect(original[size * 2 + 10] == 999 && original.count == size * 2 + 11)
        #expect(copy[5] == 5 && copy[size + 1] == size + 1 && copy[size * 2 + 3] == -3)
        #expect(copy[size * 2 + 10] == 111 && copy.count == size * 2 + 11)
        // A third generation, taken after both changed, then each side written again in place.
        let third = original
        original[5] = 5_000
        copy[5] = 6_000
        #expect(third[5] == -5 && original[5] == 5_000 && copy[5] == 6_000)
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func agreesWithAnArrayUnderRandomWritesAndCopies(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var chunked = ChunkedArray<UInt32>()
        var plain: [UInt32] = []
        var kept: [(ChunkedArray<UInt32>, [UInt32])] = []
        for step in 0..<40_000 {
            switch UInt8.random(in: 0..<10, using: &random) {
            case 0..<4:
                let value = UInt32(step)
                chunked.append(value)
                plain.append(value)
            case 4..<9 where !plain.isEmpty:
                let position = Int.random(in: 0..<plain.count, using: &random)
                chunked[position] = UInt32(truncatingIfNeeded: ~step)
                plain[position] = UInt32(truncatingIfNeeded: ~step)
            default:
                if kept.count < 8 { kept.append((chunked, plain)) }
            }
        }
        #expect(chunked.count == plain.count)
        #expect((0..<plain.count).allSatisfy { chunked[$0] == plain[$0] })
        for (copy, expected) in kept {
            #expect(copy.count == expected.count)
            #expect((0..<expected.count).allSatisfy { copy[$0] == expected[$0] })
        }
    }

    @Test(arguments: [4, 5, 6] as [UInt64]) func aValueHeldAloneAgreesWithAnArrayAndItsReadingCopiesKeepTheirElements(
        seed: UInt64
    ) {
        var random = SplitMix64(seed: seed)
        var held = ChunkedArray<UInt32>()
        held.holdTableAlone()
        var plain: [UInt32] = []
        // Reading copies, each written afterwards as an ordinary value (and copied as one).
        var kept: [(ChunkedArray<UInt32>, [UInt32])] = []
        for step in 0..<40_000 {
            switch UInt8.random(in: 0..<20, using: &random) {
            case 0..<8:
                held.append(UInt32(step))
                plain.append(UInt32(step))
            case 8..<18 where !plain.isEmpty:
                let position = Int.random(in: 0..<plain.count, using: &random)
                held[position] = UInt32(truncatingIfNeeded: ~step)
                plain[position] = UInt32(truncatingIfNeeded: ~step)
            case 18 where !kept.isEmpty:
                let which = Int.random(in: 0..<kept.count, using: &random)
                let position = Int.random(in: 0..<kept[which].1.count, using: &random)
                let copyOfCopy = kept[which].0
                let before = copyOfCopy[position]
                kept[which].0[position] = 7
                kept[which].1[position] = 7
                #expect(copyOfCopy[position] == before)
            default:
                if kept.count < 8, !plain.isEmpty { kept.append((held.readingCopy(), plain)) }
            }
        }
        #expect(held.count == plain.count)
        #expect((0..<plain.count).allSatisfy { held[$0] == plain[$0] })
        for (copy, expected) in kept {
            #expect(copy.count == expected.count)
            #expect((0..<expected.count).allSatisfy { copy[$0] == expected[$0] })
        }
    }
}
