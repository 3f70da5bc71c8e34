import Foundation
import NodescopeCollector
import NodescopeControlCodec
import SeededRandom
import Testing

/// ``TreeJSONReader`` reads what `JSONDecoder` reads, into the same view: the collector's own
/// JSON, JSON written by `JSONEncoder` in any layout, and it refuses what is no tree, without
/// recursion however deeply a hostile document nests.
@Suite("Tree JSON read by hand")
struct TreeJSONReaderTests {
    @Test(arguments: 0..<40)
    func aRandomTreeReadsAsJSONDecoderReadsIt(seed: UInt64) throws {
        var random = SplitMix64(seed: 0x5EAD_0000 + seed)
        let view = TreeJSONTests.randomView(&random, nodes: 1 + random.below(60))
        #expect(try TreeJSONReader.decode(TreeJSON.encode(view)) == view)
        // Indented, keys unsorted: any JSON of the view.
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .withoutEscapingSlashes]
        let pretty = try Array(encoder.encode(view))
        #expect(try TreeJSONReader.decode(pretty) == view)
    }

    @Test func unknownKeysAreSkippedAndEscapesRead() throws {
        let text = #"""
            { "extra": {"a": [1, -2.5e3, true, null, {"b": "}]"}]}, "session": 7, "pid": 42,
              "processName": "a\"b\\c\/d\n\u00e9\ud83d\ude00", "truncatedChildren": {"3": 2},
              "nodes": [ {"id": 3, "kind": "K", "name": "", "status": "leaked", "objects": [
                {"index": 1, "role": "r", "typeName": "T", "isAlive": true, "future": [[]]}],
                "attachedAtNanos": 5, "detachedAtNanos": null, "depth": 0, "isPlaceholder": false,
                "attachSite": {"file": "F.swift", "line": 12}} ] }
            """#
        let view = try TreeJSONReader.decode(Array(text.utf8))
        #expect(view.processName == "a\"b\\c/d\né😀")
        #expect(view.truncatedChildren == [3: 2])
        #expect(view.nodes.first?.attachSite == SourceSite(file: "F.swift", line: 12))
        #expect(view.nodes.first?.detachedAtNanos == nil)
        #expect(try JSONDecoder().decode(TreeView.self, from: Data(text.utf8)) == view)
    }

    @Test func whatIsNoTreeIsRefused() {
        let good = #"{"nodes":[],"pid":1,"processName":"p","session":1,"truncatedChildren":{}}"#
        #expect((try? TreeJSONReader.decode(Array(good.utf8))) != nil)
        let bad = [
            "", "[]", "{", #"{"nodes":[]}"#, good + "x", good.replacingOccurrences(of: #""pid":1"#, with: #""pid":1.5"#),
            good.replacingOccurrences(of: #""pid":1"#, with: #""pid":4294967296"#),
            good.replacingOccurrences(of: #""p""#, with: "\"p\n\""),
            good.replacingOccurrences(of: "[]", with: #"[{"id":1}]"#),
            good.replacingOccurrences(of: "{}", with: #"{"x":1}"#),
            // A value nested a million deep: refused, not a stack overflow.
            #"{"deep":"# + String(repeating: "[", count: 1_000_000),
        ]
        for text in bad {
            #expect(throws: TreeJSONReader.Failure.self, "\(text.prefix(80))") { try TreeJSONReader.decode(Array(text.utf8)) }
        }
    }
}
