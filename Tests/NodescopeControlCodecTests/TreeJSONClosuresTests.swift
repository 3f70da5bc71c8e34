import Foundation
import NodescopeCollector
import NodescopeControlCodec
import SeededRandom
import Testing

/// ``TreeJSONClosures`` names the closures of a tree's JSON as it streams past: whatever the
/// parts' sizes, the document it passes on is the one ``TreeJSON`` writes for the view with its
/// closures named, and every other byte is the source's.
@Suite("Tree JSON: closures named while it streams")
struct TreeJSONClosuresTests {
    /// A naming that any test can redo on a typed view: a symbol, file and line from the offset.
    static func name(_ closure: RetainerPath.Closure) -> RetainerPath.Closure {
        var closure = closure
        guard closure.fileOffset % 5 != 0 else { return closure }  // some are not named
        closure.symbol = "closure #\(closure.fileOffset % 7) in Feed\"Context\".didBecomeActive()"
        closure.file = "/src/Feed \\ \(closure.fileOffset % 3).swift"
        closure.line = Int(closure.fileOffset % 1_000)
        return closure
    }

    static func named(_ view: TreeView) -> TreeView {
        var view = view
        for node in view.nodes.indices {
            view.nodes[node].retainers = view.nodes[node].retainers?.map { path in
                var path = path
                for hop in path.hops.indices { path.hops[hop].closure = path.hops[hop].closure.map(name) }
                return path
            }
        }
        return view
    }

    /// `bytes` through a rewriter in parts of the sizes `random` draws (1 to `maxPart` bytes).
    static func rewritten(
        _ bytes: [UInt8], parts random: inout SplitMix64, maxPart: Int, namingCalls: inout Int
    ) -> [UInt8] {
        var rewriter = TreeJSONClosures()
        var output: [UInt8] = []
        var start = 0
        var calls = 0
        while start < bytes.count {
            let end = min(bytes.count, start + 1 + random.below(maxPart))
            output += rewriter.rewrite(Array(bytes[start..<end])) { closures in
                calls += 1
                return closures.map(name)
            }
            start = end
        }
        output += rewriter.finish()
        namingCalls = calls
        return output
    }

    @Test(arguments: 0..<40)
    func aTreeInPartsOfAnySizeComesOutAsItsNamedTreeWouldBeWritten(seed: UInt64) throws {
        var random = SplitMix64(seed: 0xC105_0000 + seed)
        let view = TreeJSONTests.randomView(&random, nodes: 1 + random.below(60))
        let maxPart = [1, 2, 7, 11, 64, 1_000, 1 << 16][Int(seed % 7)]
        var calls = 0
        let output = Self.rewritten(TreeJSON.encode(view), parts: &random, maxPart: maxPart, namingCalls: &calls)
        let expected = TreeJSON.encode(Self.named(view))
        #expect(output == expected, "part size up to \(maxPart): \(Self.firstDifference(output, expected))")
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(output)) == Self.named(view))
    }

    @Test func aDocumentWithoutClosuresIsPassedOnByteForByteAndNothingIsNamed() {
        var random = SplitMix64(seed: 7)
        var view = TreeJSONTests.randomView(&random, nodes: 50)
        for node in view.nodes.indices { view.nodes[node].retainers = nil }
        // Names that look like the key, which JSON escapes, are not closures.
        view.nodes[0].name = "\"closure\":{\"fileOffset\":1,\"image\":\"x\"}"
        view.nodes[1].name = "closure\":{"
        let bytes = TreeJSON.encode(view)
        var calls = 0
        for maxPart in [1, 3, 10, 4_096] {
            #expect(Self.rewritten(bytes, parts: &random, maxPart: maxPart, namingCalls: &calls) == bytes)
            #expect(calls == 0)
        }
    }

    @Test func theClosuresOfOnePartAreNamedTogether() {
        let closures = (1...3).map { RetainerPath.Closure(image: "/app", fileOffset: UInt64($0)) }
        let document = Array(
            ("{\"a\":["
                + closures.map { "{\"closure\":\(String(decoding: TreeJSON.closureObject($0), as: UTF8.self))}" }
                .joined(separator: ",") + "]}").utf8)
        var rewriter = TreeJSONClosures()
        var batches: [[UInt64]] = []
        let output = rewriter.rewrite(document) { batch in
            batches.append(batch.map(\.fileOffset))
            return batch.map(Self.name)
        }
        #expect(batches == [[1, 2, 3]])
        #expect(rewriter.finish().isEmpty)
        #expect(String(decoding: output, as: UTF8.self).contains("\"line\":2,\"symbol\":\"closure #2 in"))
    }

    /// Whatever the collector's socket sends, the rewriter neither traps nor loses a byte: what
    /// is not a closure object it can read goes on as it came.
    @Test func whatIsNotAClosureObjectGoesOnAsItCame() {
        let cases: [String] = [
            "{\"closure\":{\"fileOffset\":\"not a number\",\"image\":\"/app\"}}",
            "{\"closure\":{\"image\":\"/app\"}}",
            "{\"closure\":{\"fileOffset\":1,\"image\":\"/a}pp\\\"}\"",  // the stream ends inside the object
            "{\"closure\":{\"fileOffset\":1,\"image\":\"" + String(repeating: "x", count: TreeJSONClosures.maxObjectBytes) + "\"}}",
            "{\"closure\":{{{{{{{{{{{{{{{{{{{{{{{{{{{{",
            "\"closure\":{",
            "\"closure\":",
            "{\"closure\":{}}",
            "",
        ]
        var random = SplitMix64(seed: 3)
        for text in cases {
            let bytes = Array(text.utf8)
            for maxPart in [1, 5, 1 << 20] {
                var calls = 0
                let output = Self.rewritten(bytes, parts: &random, maxPart: maxPart, namingCalls: &calls)
                #expect(output == bytes, "\(text.prefix(80)) in parts of up to \(maxPart)")
                #expect(calls == 0)
            }
        }
        // Braces and quotes inside the object's strings do not end it early.
        let tricky = RetainerPath.Closure(image: "/a}p{p\"\\", fileOffset: 12)
        let document = Array("{\"closure\":".utf8) + TreeJSON.closureObject(tricky) + Array("}".utf8)
        var calls = 0
        let output = Self.rewritten(document, parts: &random, maxPart: 2, namingCalls: &calls)
        #expect(output == Array("{\"closure\":".utf8) + TreeJSON.closureObject(Self.name(tricky)) + Array("}".utf8))
    }

    static func firstDifference(_ a: [UInt8], _ b: [UInt8]) -> String {
        let index = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        func around(_ bytes: [UInt8]) -> String {
            String(decoding: bytes[max(0, index - 60)..<min(bytes.count, index + 60)], as: UTF8.self)
        }
        return "at byte \(index) of \(a.count) / \(b.count):\n\(around(a))\n\(around(b))"
    }
}
