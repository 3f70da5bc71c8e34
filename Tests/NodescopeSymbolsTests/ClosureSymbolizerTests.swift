import Foundation
import NodescopeWire
import ProcessTestSupport
import Testing

@testable import NodescopeSymbols

/// The closure that sample-nodes stores in `Session.listeners`, named from the real debug binary.
@Suite("A stored closure is named by its symbol and source line")
final class ClosureSymbolizerTests {
    static let closure = "$s12sample_nodes17ProfileContextImpC15didBecomeActiveyyFySSSgcfU_"

    /// A copy of the debug-built sample-nodes: the shared build may relink the original meanwhile.
    let binary: String
    let scratch: URL

    init() throws {
        scratch = makeScratchDirectory()
        let original = ChildProcess.binDirectory.appendingPathComponent("sample-nodes")
        let copy = scratch.appendingPathComponent("sample-nodes")
        try FileManager.default.copyItem(at: original, to: copy)
        binary = copy.path
    }

    deinit {
        try? FileManager.default.removeItem(at: scratch)
    }

    /// The line of the leaking `onChange` closure in the sample's source.
    static func closureLine() throws -> (file: String, line: Int) {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let file = root.appendingPathComponent("Samples/sample-nodes/ProfileNode.swift").path
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.contains("session.onChange { user in self.displayName = user ?? \"\" }") })
        return (file, index + 1)
    }

    func site(ofSymbol name: String, plus delta: UInt64 = 0) throws -> ClosureSite {
        let address = try #require(ClosureSymbolizer.address(ofFunctionNamed: name, inFile: binary))
        let offset = try #require(ClosureSymbolizer.fileOffset(ofVirtualAddress: address + delta, inFile: binary))
        return ClosureSite(image: binary, fileOffset: offset)
    }

    @Test("a partial apply forwarder is named by the closure it calls, with its file and line")
    func forwarder() throws {
        let expected = try ClosureSymbolizerTests.closureLine()
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let names = ClosureSymbolizer(timeoutSeconds: 120).names(of: [forwarder])
        let name = try #require(names[forwarder])
        #expect(name.symbol == "closure #1 in ProfileContextImp.didBecomeActive()")
        #expect(name.file?.hasSuffix("Samples/sample-nodes/ProfileNode.swift") == true)
        #expect(name.line == expected.line)
    }

    @Test("a pointer into the closure itself, at its start or inside it, names the closure")
    func closureItself() throws {
        let expected = try ClosureSymbolizerTests.closureLine()
        let start = try site(ofSymbol: ClosureSymbolizerTests.closure)
        let inside = try site(ofSymbol: ClosureSymbolizerTests.closure, plus: 4)
        let names = ClosureSymbolizer(timeoutSeconds: 120).names(of: [start, inside, start])
        #expect(names.count == 2)
        for site in [start, inside] {
            #expect(names[site]?.symbol == "closure #1 in ProfileContextImp.didBecomeActive()")
            #expect(names[site]?.line == expected.line)
        }
    }

    @Test("a second call is answered from the cache, the same")
    func cached() throws {
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let symbolizer = ClosureSymbolizer(timeoutSeconds: 120)
        let clock = ContinuousClock()
        var first: [ClosureSite: ClosureName] = [:]
        let cold = clock.measure { first = symbolizer.names(of: [forwarder]) }
        var second: [ClosureSite: ClosureName] = [:]
        let warm = clock.measure { second = symbolizer.names(of: [forwarder]) }
        print("ClosureSymbolizer on sample-nodes: cold \(cold), cached \(warm)")
        #expect(first[forwarder] != nil)
        #expect(second == first)
    }

    @Test("one symbolizer answers concurrent calls alike")
    func concurrentCalls() async throws {
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let start = try site(ofSymbol: ClosureSymbolizerTests.closure)
        let symbolizer = ClosureSymbolizer(timeoutSeconds: 120)
        let answers = await withTaskGroup(of: [ClosureSite: ClosureName].self) { group in
            for index in 0..<6 { group.addTask { await symbolizer.names(of: index % 2 == 0 ? [forwarder, start] : [start, forwarder]) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(answers.count == 6)
        #expect(answers.allSatisfy { $0 == answers[0] && $0.count == 2 })
        #expect(answers[0][forwarder] == answers[0][start])
    }

    @Test("the async variant answers the same")
    func asyncVariant() async throws {
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let names = await ClosureSymbolizer(timeoutSeconds: 120).names(of: [forwarder])
        #expect(names[forwarder]?.symbol == "closure #1 in ProfileContextImp.didBecomeActive()")
    }

    @Test("without a symbolizer the symbol comes alone, without file or line")
    func missingSymbolizer() throws {
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        for path in ["/nonexistent/llvm-symbolizer", nil] {
            let names = ClosureSymbolizer(symbolizerPath: path, timeoutSeconds: 120).names(of: [forwarder])
            #expect(names[forwarder] == ClosureName(symbol: "closure #1 in ProfileContextImp.didBecomeActive()"))
        }
    }

    @Test("without swift-demangle the runtime's demangler names it, unsimplified")
    func missingDemangler() throws {
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let names = ClosureSymbolizer(symbolizerPath: nil, demanglerPath: nil).names(of: [forwarder])
        let symbol = try #require(names[forwarder]?.symbol)
        #expect(symbol.hasPrefix("closure #1 "))
        #expect(symbol.contains("ProfileContextImp.didBecomeActive()"))
    }

    @Test("a demangler that fails leaves the name mangled; the place still comes")
    func failingDemangler() throws {
        let expected = try ClosureSymbolizerTests.closureLine()
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let names = ClosureSymbolizer(demanglerPath: "/bin/false", timeoutSeconds: 120).names(of: [forwarder])
        #expect(names[forwarder]?.symbol == ClosureSymbolizerTests.closure)
        #expect(names[forwarder]?.line == expected.line)
    }

    @Test("a symbolizer that hangs is killed at the timeout; the symbol comes without file or line")
    func hangingSymbolizer() throws {
        let script = scratch.appendingPathComponent("hang.sh")
        // Not `exec`: the sleep is a grandchild holding the output open, killed with its group.
        try "#!/bin/sh\nsleep 600\necho never\n".write(to: script, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        let forwarder = try site(ofSymbol: ClosureSymbolizerTests.closure + "TA")
        let symbolizer = ClosureSymbolizer(symbolizerPath: script.path, timeoutSeconds: 1)
        let started = ContinuousClock.now
        let names = symbolizer.names(of: [forwarder])
        #expect(ContinuousClock.now - started < .seconds(60))
        #expect(names[forwarder] == ClosureName(symbol: "closure #1 in ProfileContextImp.didBecomeActive()"))
    }

    @Test("a file that is missing, not ELF, truncated or not a file, or an offset in no segment: no entry")
    func unusableInput() throws {
        let garbage = scratch.appendingPathComponent("garbage")
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: garbage)
        let original = try Data(contentsOf: URL(fileURLWithPath: binary))
        var sites = [
            ClosureSite(image: garbage.path, fileOffset: 64),
            ClosureSite(image: scratch.appendingPathComponent("missing").path, fileOffset: 64),
            ClosureSite(image: scratch.path, fileOffset: 64),
            ClosureSite(image: "/dev/zero", fileOffset: 64),
            ClosureSite(image: "relative/path", fileOffset: 64),
            ClosureSite(image: "", fileOffset: 0),
            ClosureSite(image: binary, fileOffset: UInt64(original.count) + 4096),
            ClosureSite(image: binary, fileOffset: .max),
        ]
        // The ELF header alone, the headers and part of the code, all but the last bytes (the
        // section headers cut), and an ELF header that points its tables past the end.
        for length in [16, 64, 100, 4096, original.count / 2, original.count - 100] {
            let truncated = scratch.appendingPathComponent("truncated-\(length)")
            try original.prefix(length).write(to: truncated)
            sites.append(ClosureSite(image: truncated.path, fileOffset: 64))
        }
        var lying = original.prefix(4096)
        lying.replaceSubrange(0x20..<0x30, with: [UInt8](repeating: 0xFF, count: 16))
        let lyingFile = scratch.appendingPathComponent("lying")
        try lying.write(to: lyingFile)
        sites.append(ClosureSite(image: lyingFile.path, fileOffset: 64))
        // Section headers said to be at the very end of the address space, counted in section 0.
        var extended = original.prefix(4096)
        extended.replaceSubrange(0x28..<0x30, with: [UInt8](repeating: 0xFF, count: 8))
        extended.replaceSubrange(0x3C..<0x3E, with: [0, 0])
        let extendedFile = scratch.appendingPathComponent("extended")
        try extended.write(to: extendedFile)
        sites.append(ClosureSite(image: extendedFile.path, fileOffset: 64))
        let names = ClosureSymbolizer(timeoutSeconds: 120).names(of: sites)
        #expect(names.isEmpty)
    }

    @Test("where the helpers are found: the environment's symbolizer, else beside swift on PATH")
    func helperLocations() {
        #expect(ClosureSymbolizer.defaultSymbolizer(environment: ["NODESCOPE_SYMBOLIZER": "/x/sym", "PATH": "/usr/bin"]) == "/x/sym")
        #expect(ClosureSymbolizer.defaultSymbolizer(environment: ["PATH": ""]) == nil)
        #expect(ClosureSymbolizer.defaultSymbolizer(environment: ["NODESCOPE_SYMBOLIZER": "sh", "PATH": "/bin"]) == "/bin/sh")
        #expect(ClosureSymbolizer.defaultDemangler(environment: ["PATH": "/nonexistent"]) == nil)
        if let swift = ClosureSymbolizer.defaultDemangler() {
            #expect(swift.hasSuffix("/swift-demangle"))
        }
    }
}

@Suite("Closure symbols and symbolizer output, read")
struct ClosureSymbolTextTests {
    @Test("a partial apply forwarder's closure is its name without TA, merged or suffixed")
    func forwarders() {
        let closure = "$s4main3FooC3baryyFyycfU_"
        #expect(ThunkName.forwardedFunction(of: closure + "TA") == closure)
        #expect(ThunkName.forwardedFunction(of: closure + "TATm") == closure)
        #expect(ThunkName.forwardedFunction(of: closure + "TA.3") == closure)
        #expect(ThunkName.forwardedFunction(of: closure + "TA.llvm.1234") == closure)
        #expect(ThunkName.forwardedFunction(of: closure) == nil)
        #expect(ThunkName.forwardedFunction(of: "$sSSIegg_SSIegn_TRTA") == nil)
        #expect(ThunkName.forwardedFunction(of: "TA") == nil)
        #expect(ThunkName.forwardedFunction(of: "memcpyTA") == nil)
        #expect(ThunkName.unmerged(closure + "Tm") == closure)
        #expect(ThunkName.unmerged(closure) == nil)
        #expect(ThunkName.unsuffixed("main.cold.1") == "main.cold.1")
    }

    @Test("the last frame's place of each address; unknown and compiler-generated places are nil")
    func places() {
        let text = """
            inlined
            /src/A.swift:7:3
            $s4main1fyyF
            /src/B.swift:20:0

            $s4main1gyyFTA
            /<compiler-generated>:0:0

            ??
            ??:0:0

            h
            C:\\dir\\c.swift:5:1

            """
        let places = SymbolizerOutput.places(in: text, count: 4)
        #expect(places[0] == SymbolizerOutput.Place(file: "/src/B.swift", line: 20, column: nil))
        #expect(places[1] == nil)
        #expect(places[2] == nil)
        #expect(places[3] == SymbolizerOutput.Place(file: "C:\\dir\\c.swift", line: 5, column: 1))
        #expect(SymbolizerOutput.places(in: text, count: 3) == [nil, nil, nil])
        #expect(SymbolizerOutput.places(in: "f\n", count: 1) == [nil])
    }
}
