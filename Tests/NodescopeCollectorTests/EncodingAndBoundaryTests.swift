import Foundation
import NodescopeCollector
import NodescopeWire
import Testing

@Suite("Codable shapes and the module's dependencies")
struct EncodingAndBoundaryTests {
    @Test func viewsChangesAndRecordsRoundTripThroughJSON() throws {
        var host = Harness()
        try host.attach(1, kind: "Flow", name: "AppFlow")
        try host.attach(2, parent: 1, kind: "Flow", name: "LoginFlow", objects: ["flow", "worker"])
        try host.detach(2)
        host.advance(to: host.now + Harness.second)
        try host.release(2, 0)
        try host.release(2, 1)

        let view = try #require(host.collector.tree(host.session, depth: 0))
        #expect(view.truncatedChildren == [1: 1])
        let viewJSON = try JSONEncoder().encode(view)
        #expect(String(decoding: viewJSON, as: UTF8.self).contains("\"truncatedChildren\":{\"1\":1}"))
        #expect(try JSONDecoder().decode(TreeView.self, from: viewJSON) == view)

        let changes = host.changes
        #expect(try JSONDecoder().decode([TreeChange].self, from: JSONEncoder().encode(changes)) == changes)
        let leaks = host.leaks
        #expect(leaks.first?.verdict == .lateRelease)
        #expect(try JSONDecoder().decode([LeakRecord].self, from: JSONEncoder().encode(leaks)) == leaks)
        let summaries = host.collector.processes()
        #expect(try JSONDecoder().decode([ProcessSummary].self, from: JSONEncoder().encode(summaries)) == summaries)
        #expect(String(decoding: try JSONEncoder().encode(host.session), as: UTF8.self) == "1")
    }

    @Test("the module imports NodescopeWire only (no Foundation)")
    func importsOnlyTheWireModule() throws {
        let sources = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/NodescopeCollector")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var checked = 0
        for case let file as URL in enumerator where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let imports = text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter {
                    $0.hasPrefix("import ") || $0.hasPrefix("@_exported import ")
                        || $0.hasPrefix("@preconcurrency import ")
                }
            #expect(imports.allSatisfy { $0 == "import NodescopeWire" }, "\(file.lastPathComponent) imports \(imports)")
            checked += 1
        }
        #expect(checked > 10)
    }
}
