/// A 64-bit little-endian ELF file read for two things: where a file offset is in memory (through
/// the PT_LOAD program headers) and which function symbol (`.symtab`, STT_FUNC) holds an address.
/// Every read is bounds-checked: a short, garbage or hostile file yields nil, never a trap.
final class ELFImage {
    /// One defined function symbol.
    struct Function: Equatable {
        /// Its virtual address.
        var address: UInt64
        /// Its size in bytes (0 when the symbol table does not say).
        var size: UInt64
        /// Where its name starts in the string table.
        var nameOffset: UInt64
    }

    /// A loadable segment: file bytes `[fileOffset, fileOffset + fileSize)` at `virtualAddress`.
    struct Segment: Equatable {
        var fileOffset: UInt64
        var virtualAddress: UInt64
        var fileSize: UInt64
    }

    /// The longest symbol name read; a longer one counts as no name.
    static let maxNameBytes = 8_192
    /// The most symbols read from one table (a huge binary has a few million).
    static let maxSymbols: UInt64 = 50_000_000

    let file: MappedFile
    let segments: [Segment]
    /// The function symbols, sorted by address.
    let functions: [Function]
    private let stringTable: (offset: UInt64, size: UInt64)

    /// Reads `file`'s headers and symbol table; nil when it is not a 64-bit little-endian ELF file,
    /// has no `.symtab` (stripped) or a malformed one.
    init?(file: MappedFile) {
        self.file = file
        guard file.bytes.count >= 64, file.bytes[0] == 0x7F, file.bytes[1] == 0x45, file.bytes[2] == 0x4C,
            file.bytes[3] == 0x46, file.bytes[4] == 2, file.bytes[5] == 1
        else { return nil }
        guard let segments = ELFImage.readSegments(file), !segments.isEmpty,
            let table = ELFImage.readSymbolTable(file)
        else { return nil }
        self.segments = segments
        self.functions = table.functions
        self.stringTable = table.strings
    }

    /// The virtual address of `fileOffset`, through the loadable segment whose file bytes hold it.
    func virtualAddress(ofFileOffset fileOffset: UInt64) -> UInt64? {
        for segment in segments where fileOffset >= segment.fileOffset && fileOffset - segment.fileOffset < segment.fileSize {
            let (address, overflow) = segment.virtualAddress.addingReportingOverflow(fileOffset - segment.fileOffset)
            return overflow ? nil : address
        }
        return nil
    }

    /// The function symbol that holds `address`: the one with the highest start at or below it whose
    /// size covers it (or which starts exactly there, when its size is 0).
    func function(containing address: UInt64) -> Function? {
        var low = 0
        var high = functions.count
        while low < high {
            let middle = (low + high) / 2
            if functions[middle].address <= address { low = middle + 1 } else { high = middle }
        }
        var index = low - 1
        var best: Function?
        // Several symbols may start at the same place, or a large one may enclose smaller ones: look
        // back a little for the innermost that covers the address.
        var looked = 0
        while index >= 0, looked < 64 {
            let candidate = functions[index]
            let covers =
                candidate.size == 0
                ? candidate.address == address : address - candidate.address < candidate.size
            if covers {
                if let chosen = best {
                    if candidate.address < chosen.address { break }
                    if candidate.size < chosen.size { best = candidate }
                } else {
                    best = candidate
                }
            }
            index -= 1
            looked += 1
        }
        return best
    }

    /// The name of `function`, as bytes of the string table; nil when out of range.
    func nameBytes(of function: Function) -> UnsafeRawBufferPointer? {
        guard function.nameOffset < stringTable.size else { return nil }
        let bytes = file.cString(at: stringTable.offset + function.nameOffset, limit: ELFImage.maxNameBytes)
        guard let bytes, function.nameOffset + UInt64(bytes.count) < stringTable.size else { return nil }
        return bytes
    }

    /// The name of `function` when it is printable ASCII without spaces (a mangled or C name).
    func name(of function: Function) -> String? {
        guard let bytes = nameBytes(of: function), bytes.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return nil }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The addresses of the function symbols named one of `names`, each the first such symbol.
    func addresses(ofFunctionsNamed names: Set<String>) -> [String: Function] {
        guard !names.isEmpty else { return [:] }
        let lengths = Set(names.map(\.utf8.count))
        var found: [String: Function] = [:]
        for function in functions {
            guard let bytes = nameBytes(of: function), lengths.contains(bytes.count) else { continue }
            let name = String(decoding: bytes, as: UTF8.self)
            if names.contains(name), found[name] == nil {
                found[name] = function
                if found.count == names.count { break }
            }
        }
        return found
    }

    private static func readSegments(_ file: MappedFile) -> [Segment]? {
        guard let tableOffset = file.load(UInt64.self, at: 0x20), let entrySize = file.load(UInt16.self, at: 0x36),
            let count = file.load(UInt16.self, at: 0x38), entrySize >= 56
        else { return nil }
        var segments: [Segment] = []
        for index in 0..<UInt64(count) {
            let (entry, overflow) = tableOffset.addingReportingOverflow(index * UInt64(entrySize))
            guard !overflow, file.contains(offset: entry, count: 56), let type = file.load(UInt32.self, at: entry),
                let offset = file.load(UInt64.self, at: entry + 8), let address = file.load(UInt64.self, at: entry + 16),
                let size = file.load(UInt64.self, at: entry + 32)
            else { return nil }
            if type == 1, size > 0 { segments.append(Segment(fileOffset: offset, virtualAddress: address, fileSize: size)) }
        }
        return segments
    }

    private static func readSymbolTable(_ file: MappedFile) -> (functions: [Function], strings: (offset: UInt64, size: UInt64))? {
        guard let tableOffset = file.load(UInt64.self, at: 0x28), let entrySize = file.load(UInt16.self, at: 0x3A),
            var count = file.load(UInt16.self, at: 0x3C).map(UInt64.init), entrySize >= 64, tableOffset != 0
        else { return nil }
        if count == 0 {
            // More than 0xff00 sections: the count is section 0's size.
            let (sizeField, overflow) = tableOffset.addingReportingOverflow(32)
            guard !overflow, let extended = file.load(UInt64.self, at: sizeField) else { return nil }
            count = min(extended, 1 << 20)
        }
        func header(_ index: UInt64) -> UInt64? {
            let (offset, overflow) = tableOffset.addingReportingOverflow(index * UInt64(entrySize))
            return !overflow && file.contains(offset: offset, count: 64) ? offset : nil
        }
        for index in 0..<count {
            guard let section = header(index), let type = file.load(UInt32.self, at: section + 4), type == 2 else { continue }
            guard let offset = file.load(UInt64.self, at: section + 24), let size = file.load(UInt64.self, at: section + 32),
                let link = file.load(UInt32.self, at: section + 40), let symbolSize = file.load(UInt64.self, at: section + 56),
                symbolSize >= 24, symbolSize <= 1024, file.contains(offset: offset, count: size),
                UInt64(link) < count, let strings = header(UInt64(link)),
                let stringsOffset = file.load(UInt64.self, at: strings + 24),
                let stringsSize = file.load(UInt64.self, at: strings + 32),
                file.contains(offset: stringsOffset, count: stringsSize)
            else { return nil }
            let symbols = min(size / symbolSize, maxSymbols)
            var functions: [Function] = []
            functions.reserveCapacity(Int(symbols / 2))
            for symbol in 0..<symbols {
                let entry = offset + symbol * symbolSize
                guard let info = file.load(UInt8.self, at: entry + 4), info & 0xF == 2,
                    let sectionIndex = file.load(UInt16.self, at: entry + 6), sectionIndex != 0,
                    let nameOffset = file.load(UInt32.self, at: entry), nameOffset != 0,
                    let value = file.load(UInt64.self, at: entry + 8), let symbolBytes = file.load(UInt64.self, at: entry + 16)
                else { continue }
                functions.append(Function(address: value, size: symbolBytes, nameOffset: UInt64(nameOffset)))
            }
            functions.sort { ($0.address, $0.size) < ($1.address, $1.size) }
            return (functions, (stringsOffset, stringsSize))
        }
        return nil
    }
}
