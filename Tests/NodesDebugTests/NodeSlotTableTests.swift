import SeededRandom
import Testing

@testable import NodesDebug

@Suite("NodeSlotTable: the tracker's id-to-slot map")
struct NodeSlotTableTests {
    @Test(arguments: [1, 2, 3, 4]) func behavesLikeADictionaryUnderRandomChurn(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var table = NodeSlotTable(capacity: 4)
        var model: [UInt64: Int] = [:]
        var nextID: UInt64 = 1
        for step in 0..<20_000 {
            switch random.below(10) {
            case 0..<5:
                // Mostly fresh, increasing ids, as the tracker hands out; sometimes an update.
                let key = model.isEmpty || random.chance(80) ? nextID : Array(model.keys)[random.below(model.count)]
                if key == nextID { nextID += UInt64(1 + random.below(3)) }
                table.set(key, to: step)
                model[key] = step
            case 5..<9 where !model.isEmpty:
                let key = Array(model.keys)[random.below(model.count)]
                table.remove(key)
                model[key] = nil
            default:
                table.remove(nextID + 1_000)  // absent keys are ignored
            }
            if step % 997 == 0 {
                for (key, value) in model { #expect(table[key] == value) }
                #expect(table[nextID + 5_000] == nil)
            }
            #expect(table.count == model.count)
        }
        for (key, value) in model { #expect(table[key] == value) }
    }
}
