import Foundation
import Testing

@Suite("NodescopeWire depends on nothing")
struct ModuleBoundaryTests {
    @Test("no source file of the module imports another module")
    func importsNothing() throws {
        let sources = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath()
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Sources/NodescopeWire")
        let enumerator = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var checked = 0
        for case let file as URL in enumerator where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            let imports = text.split(separator: "\n").filter {
                let line = $0.trimmingCharacters(in: .whitespaces)
                return line.hasPrefix("import ") || line.hasPrefix("@_exported import ") || line.hasPrefix("@preconcurrency import ")
            }
            #expect(imports.isEmpty, "\(file.lastPathComponent) imports \(imports)")
            checked += 1
        }
        #expect(checked > 10)
    }
}
