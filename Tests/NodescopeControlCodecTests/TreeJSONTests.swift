import Foundation
import NodescopeCollector
import NodescopeControlCodec
import SeededRandom
import Testing

/// ``TreeJSON`` writes the document `JSONEncoder` writes: read back by `JSONDecoder` it is the
/// same view, for every shape of node and every string, hostile ones included.
@Suite("Tree JSON written by hand")
struct TreeJSONTests {
    @Test(arguments: 0..<40)
    func aRandomTreeReadsBackAsItself(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x7EE_0000 + seed)
        let view = Self.randomView(&random, nodes: 1 + random.below(60))
        let written = TreeJSON.encode(view)
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(written)) == view)
        #expect(!written.contains(0x0A), "one line: a body goes out as one server-sent event")
    }

    @Test func itIsByteForByteWhatJSONEncoderWritesForPlainText() throws {
        var random = SplitMix64(seed: 99)
        var view = Self.randomView(&random, nodes: 200, plain: true)
        view.truncatedChildren = [12: 3, 7: 1, 100: 9]
        view.wallNanos = 1_795_737_600_123_456_789
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let foundation = try encoder.encode(view)
        #expect(String(decoding: TreeJSON.encode(view), as: UTF8.self) == String(decoding: foundation, as: UTF8.self))
    }

    @Test func controlBodiesOfTreesAreWrittenByIt() throws {
        var random = SplitMix64(seed: 5)
        let view = Self.randomView(&random, nodes: 10)
        #expect(ControlBody.encode(view) == TreeJSON.encode(view))
        #expect(try ControlBody.decode(TreeView.self, from: ControlBody.encode(view)) == view)
    }

    @Test func extremeNumbersAndAnEmptyTree() throws {
        let empty = TreeView(session: SessionID(rawValue: .max), pid: .max, processName: "", nodes: [])
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(TreeJSON.encode(empty))) == empty)
        let node = NodeInfo(
            id: .max, parent: 0, kind: "", name: "", status: .leaked,
            objects: [ObjectInfo(index: .max, role: "", typeName: "", isAlive: false)], attachedAtNanos: .max,
            detachedAtNanos: 0, depth: Int.max, isPlaceholder: true)
        let view = TreeView(
            session: SessionID(rawValue: 0), pid: 0, processName: "x", nodes: [node], truncatedChildren: [.max: Int.min])
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(TreeJSON.encode(view))) == view)
    }

    // MARK: Random views

    static let hostile = [
        "", "AppFlow", "Quote\"d", "back\\slash", "new\nline", "tab\t", "\u{1B}[2J", "\u{0}nul", "\u{7F}\u{9B}",
        "é✖ 日本", "🦊", "\u{2028}", "a/b", "\r\n", "\u{1F}",
    ]
    static let plainNames = ["AppFlow", "Feed", "Profile Flow", "x", "Settings-2", "a.b"]

    static func randomView(_ random: inout SplitMix64, nodes count: Int, plain: Bool = false) -> TreeView {
        let words = plain ? plainNames : hostile
        func word() -> String { words[random.below(words.count)] }
        func maybe<T>(_ make: () -> T) -> T? { random.chance(50) ? make() : nil }
        func site() -> SourceSite { SourceSite(file: plain ? "Sources/App/Feed.swift" : word(), line: UInt32(random.next() >> 33)) }
        var nodes: [NodeInfo] = []
        for index in 0..<count {
            let objects = (0..<random.below(4)).map { object in
                ObjectInfo(index: UInt16(object), role: word(), typeName: word(), isAlive: random.chance(50))
            }
            let retainers = maybe {
                (0..<random.below(3)).map { _ in
                    RetainerPath(
                        objectIndex: UInt16(random.below(3)), verdict: RetainerPath.Verdict.allCases[random.below(6)],
                        hops: (0..<random.below(4)).map { _ in
                            RetainerPath.Hop(
                                holderKind: RetainerPath.HolderKind.allCases[random.below(8)],
                                holderNodeID: maybe { random.next() }, holder: word(), reference: word(),
                                isSuspect: random.chance(30),
                                closure: maybe {
                                    RetainerPath.Closure(
                                        image: word(), fileOffset: random.next(), symbol: maybe { word() }, file: maybe { word() },
                                        line: maybe { random.below(100_000) }, column: maybe { random.below(200) })
                                })
                        }, cutShort: random.chance(20), note: word(), elapsedMicros: UInt32(random.next() >> 32))
                }
            }
            nodes.append(
                NodeInfo(
                    id: UInt64(index + 1), parent: index == 0 ? nil : UInt64(1 + random.below(index)), kind: word(),
                    name: word(), status: NodeStatus.allCases[random.below(NodeStatus.allCases.count)], objects: objects,
                    attachedAtNanos: random.next(), detachedAtNanos: maybe { random.next() }, depth: random.below(30),
                    isPlaceholder: random.chance(10), retainers: retainers, attachSite: maybe { site() },
                    test: maybe { TestInfo(suite: word(), name: word(), location: maybe { site() }) }))
        }
        return TreeView(
            session: SessionID(rawValue: random.next()), pid: UInt32(random.next() >> 32), processName: word(), nodes: nodes,
            truncatedChildren: random.chance(50) ? [UInt64(random.below(100)): random.below(1000)] : [:],
            counts: maybe {
                NodeCounts(
                    attached: random.below(1000), awaitingRelease: random.below(9), leaked: random.below(9),
                    retainedByGlobal: random.below(9), unverified: random.below(9), exitFlushCut: random.below(9),
                    releasedLate: random.below(9))
            }, wallNanos: maybe { random.next() })
    }
}
