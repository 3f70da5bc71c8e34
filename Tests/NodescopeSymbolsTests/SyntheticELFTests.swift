import Foundation
import NodescopeWire
import Testing

@testable import NodescopeSymbols

/// A small 64-bit ELF file written by hand: one PT_LOAD segment (file offset 0 at `base`), a
/// `.symtab` of function symbols and its string table.
struct SyntheticELF {
    static let base: UInt64 = 0x40_0000

    var functions: [(name: String, address: UInt64, size: UInt64)]

    var bytes: [UInt8] {
        var strings: [UInt8] = [0]
        var nameOffsets: [UInt32] = []
        for function in functions {
            nameOffsets.append(UInt32(strings.count))
            strings += Array(function.name.utf8) + [0]
        }
        var file = [UInt8](repeating: 0, count: 120)
        let stringsOffset = file.count
        file += strings
        while file.count % 8 != 0 { file.append(0) }
        let symbolsOffset = file.count
        file += [UInt8](repeating: 0, count: 24)
        for (index, function) in functions.enumerated() {
            var symbol = [UInt8](repeating: 0, count: 24)
            put(nameOffsets[index], at: 0, in: &symbol)
            symbol[4] = 2  // STB_LOCAL, STT_FUNC
            put(UInt16(1), at: 6, in: &symbol)
            put(function.address, at: 8, in: &symbol)
            put(function.size, at: 16, in: &symbol)
            file += symbol
        }
        let symbolsSize = file.count - symbolsOffset
        let sectionsOffset = file.count
        var sections = [UInt8](repeating: 0, count: 64 * 3)
        put(UInt32(2), at: 64 + 4, in: &sections)
        put(UInt64(symbolsOffset), at: 64 + 24, in: &sections)
        put(UInt64(symbolsSize), at: 64 + 32, in: &sections)
        put(UInt32(2), at: 64 + 40, in: &sections)
        put(UInt64(24), at: 64 + 56, in: &sections)
        put(UInt32(3), at: 128 + 4, in: &sections)
        put(UInt64(stringsOffset), at: 128 + 24, in: &sections)
        put(UInt64(strings.count), at: 128 + 32, in: &sections)
        file += sections

        file.replaceSubrange(0..<8, with: [0x7F, 0x45, 0x4C, 0x46, 2, 1, 1, 0])
        put(UInt16(3), at: 0x10, in: &file)  // ET_DYN
        put(UInt16(62), at: 0x12, in: &file)  // x86-64
        put(UInt64(64), at: 0x20, in: &file)
        put(UInt64(sectionsOffset), at: 0x28, in: &file)
        put(UInt16(64), at: 0x34, in: &file)
        put(UInt16(56), at: 0x36, in: &file)
        put(UInt16(1), at: 0x38, in: &file)
        put(UInt16(64), at: 0x3A, in: &file)
        put(UInt16(3), at: 0x3C, in: &file)
        put(UInt32(1), at: 64, in: &file)  // PT_LOAD
        put(SyntheticELF.base, at: 64 + 16, in: &file)
        put(UInt64(0x1000), at: 64 + 32, in: &file)
        put(UInt64(0x1000), at: 64 + 40, in: &file)
        return file
    }

    private func put<T: FixedWidthInteger>(_ value: T, at offset: Int, in bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.replaceSubrange(offset..<offset + $0.count, with: $0) }
    }
}

@Suite("ELF symbol tables read by hand")
final class SyntheticELFTests {
    static let closure = "$s12sample_nodes17ProfileContextImpC15didBecomeActiveyyFySSSgcfU_"
    let scratch: URL

    init() throws {
        scratch = FileManager.default.temporaryDirectory.appendingPathComponent("nssym-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: scratch)
    }

    func write(_ bytes: [UInt8], as name: String) throws -> String {
        let url = scratch.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    @Test("merged forwarders (TATm) and suffixed ones (TA.N) name the closure they call; a reabstraction thunk names itself")
    func forwarders() throws {
        let thunk = "$sSSSgIegg_AAIegn_TR"
        let elf = SyntheticELF(functions: [
            (Self.closure, SyntheticELF.base + 0x200, 0x40),
            (Self.closure + "TATm", SyntheticELF.base + 0x300, 0x20),
            (Self.closure + "TA.7", SyntheticELF.base + 0x320, 0x20),
            (thunk + "TA", SyntheticELF.base + 0x340, 0x20),
        ])
        let path = try write(elf.bytes, as: "synthetic")
        let sites = [0x300, 0x328, 0x210, 0x340].map { ClosureSite(image: path, fileOffset: $0) }
        let names = ClosureSymbolizer(symbolizerPath: nil, timeoutSeconds: 120).names(of: sites)
        for site in sites.prefix(3) {
            #expect(names[site] == ClosureName(symbol: "closure #1 in ProfileContextImp.didBecomeActive()"))
        }
        let thunkName = try #require(names[sites[3]]?.symbol)
        #expect(thunkName.hasPrefix("partial apply for "))
        #expect(thunkName.contains("thunk"))
        #expect(names[sites[3]]?.isThunk == true)
        #expect(names[sites[0]]?.isThunk == false)
    }

    @Test("an address between functions, or past a sized one, is in none")
    func gaps() throws {
        let elf = SyntheticELF(functions: [("a", SyntheticELF.base + 0x200, 0x10), ("b", SyntheticELF.base + 0x300, 0)])
        let file = try #require(MappedFile(path: try write(elf.bytes, as: "gaps")))
        let image = try #require(ELFImage(file: file))
        #expect(image.function(containing: SyntheticELF.base + 0x20F).map { image.name(of: $0) } == "a")
        #expect(image.function(containing: SyntheticELF.base + 0x210) == nil)
        #expect(image.function(containing: SyntheticELF.base + 0x300).map { image.name(of: $0) } == "b")
        #expect(image.function(containing: SyntheticELF.base + 0x301) == nil)
        #expect(image.function(containing: 0) == nil)
        #expect(image.virtualAddress(ofFileOffset: 0x1000) == nil)
    }

    @Test("random damage to a symbol table never traps")
    func damage() throws {
        let elf = SyntheticELF(functions: [
            (Self.closure, SyntheticELF.base + 0x200, 0x40), (Self.closure + "TA", SyntheticELF.base + 0x300, 0x20),
        ])
        let original = elf.bytes
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
        var parsed = 0
        for round in 0..<2_000 {
            var bytes = original
            for _ in 0...(next() % 8) {
                bytes[Int(next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: next())
            }
            if round % 10 == 0 { bytes.removeLast(Int(next() % UInt64(bytes.count))) }
            let path = try write(bytes, as: "damaged")
            guard let file = MappedFile(path: path), let image = ELFImage(file: file) else { continue }
            parsed += 1
            for _ in 0..<8 {
                let address = SyntheticELF.base + next() % 0x1000
                if let function = image.function(containing: address) { _ = image.name(of: function) }
                _ = image.virtualAddress(ofFileOffset: next() % 0x2000)
            }
            _ = image.addresses(ofFunctionsNamed: [Self.closure, "x"])
        }
        #expect(parsed > 0)
    }
}
