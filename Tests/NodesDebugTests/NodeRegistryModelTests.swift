import NodesDebug
import SeededRandom
import Testing

@testable import NodesTracking

@Suite("NodeRegistry: the dense layout against a plain model")
struct NodeRegistryModelTests {
    final class Object {}

    /// Random attaches (some with many objects, some weak, unique names), detaches and releases:
    /// the snapshot always equals what a plain model of records says, slots and object blocks
    /// are reused, and interned names come and go. Held alone as the tracker holds its registry
    /// (``NodeRegistry/holdTablesAlone()``), the reading copies taken along the way keep what
    /// they saw while the registry goes on changing.
    @Test(arguments: [1, 2, 3], [false, true]) func agreesWithAPlainModelUnderRandomChurn(seed: UInt64, heldAlone: Bool) {
        struct ModelNode {
            var parent: NodeID?
            var name: String
            var detachedAt: UInt64?
            var objects: [(role: ObjectRole, typeName: String, alive: Bool)] = []
            var children: [NodeID] = []
        }
        var random = SplitMix64(seed: seed)
        var registry = NodeRegistry()
        if heldAlone { registry.holdTablesAlone() }
        var readingCopies: [(copy: NodeRegistry, seen: [NodeSnapshot])] = []
        var model: [NodeID: ModelNode] = [:]
        var keep: [Object] = []
        var nextID: UInt64 = 1
        var time: UInt64 = 0

        func forgetReleased(_ id: NodeID) {
            guard let node = model[id], node.detachedAt != nil, !node.objects.contains(where: \.alive),
                node.children.isEmpty
            else { return }
            model[id] = nil
            if let parent = node.parent, model[parent] != nil {
                model[parent]!.children.removeAll { $0 == id }
                forgetReleased(parent)
            }
        }
        func detachModel(_ id: NodeID) {
            guard let node = model[id], node.detachedAt == nil else { return }
            for child in node.children.reversed() { detachModel(child) }
            model[id]?.detachedAt = time
            forgetReleased(id)
        }

        for step in 0..<1_500 {
            time += 1
            let live = model.keys.sorted { $0 < $1 }
            switch random.below(10) {
            case 0..<4:
                let id = NodeID(rawValue: nextID)
                nextID += 1
                let parent = live.isEmpty || random.chance(10) ? nil : live[random.below(live.count)]
                let name = random.chance(30) ? "Unique\(step)" : "Node\(random.below(4))"
                _ = registry.attach(id, parent: parent, kind: .flow, name: name, time: time, principal: nil)
                var node = ModelNode(parent: parent, name: name)
                let objects = random.chance(5) ? 40 : 1 + random.below(5)
                for index in 0..<objects {
                    let weak = random.chance(20)
                    let object = Object()
                    if weak { keep.append(object) }
                    let typeName = "Type\(index % 3)"
                    let added = registry.addObject(
                        to: id, role: .worker, typeName: typeName, weak: weak ? WeakReference(object) : nil,
                        address: .unknown)
                    #expect(added == UInt16(index))
                    node.objects.append((.worker, typeName, true))
                }
                if let parent, model[parent] != nil { model[parent]!.children.append(id) }
                model[id] = node
            case 4..<6 where !live.isEmpty:
                let id = live[random.below(live.count)]
                _ = registry.detach(id, time: time)
                detachModel(id)
            case 6..<10 where !live.isEmpty:
                let id = live[random.below(live.count)]
                let count = model[id]!.objects.count
                let index = random.below(count)
                let released = registry.release(id, index: UInt16(index))
                #expect((released != nil) == model[id]!.objects[index].alive)
                model[id]!.objects[index].alive = false
                if model[id]!.detachedAt != nil { forgetReleased(id) }
            default:
                break
            }
            if step % 101 == 0 || step == 1_499 {
                let snapshot = registry.snapshotNodes()
                #expect(snapshot.map(\.id) == model.keys.sorted { $0 < $1 })
                for node in snapshot {
                    guard let expected = model[node.id] else { continue }
                    #expect(node.name == expected.name)
                    #expect(node.parent == expected.parent)
                    #expect(node.detachedAt == expected.detachedAt)
                    #expect(node.objects.map(\.isAlive) == expected.objects.map(\.alive))
                    #expect(node.objects.map(\.typeName) == expected.objects.map(\.typeName))
                }
                #expect(registry.count == model.count)
                if heldAlone { readingCopies.append((registry.readingCopy(), snapshot)) }
            }
        }
        for (copy, seen) in readingCopies { #expect(copy.snapshotNodes() == seen) }
        #expect(readingCopies.count == (heldAlone ? 16 : 0))
        _ = keep
    }
}
