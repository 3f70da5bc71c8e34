import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The data symbols of an ELF image from its `.symtab`: what names a global variable of an
/// executable, whose symbols are local and so unknown to the dynamic linker.
///
/// Only the symbol table is read (names are read from the file when asked for), so a large
/// debug executable costs little.
final class ElfSymbols: @unchecked Sendable {
    // Unchecked: its properties are set while it is made and only read after, from any thread
    // (the tables are shared by every analysis of the process).
    private let path: String
    /// Data symbols by address: (address, size, offset of the name in the string table).
    private var symbols: [(value: UInt, size: UInt, name: UInt32)] = []
    private var stringTableOffset: Int = 0
    private var stringTableSize: Int = 0
    /// The lowest address the image's loadable segments ask for (0 for a shared object or a
    /// position-independent executable): the load address minus this is the bias.
    private(set) var lowestLoadAddress: UInt = 0
    /// Where the image's writable loadable segments end (their `.data` and `.bss`), in image
    /// addresses, rounded up to a page: what lies past it in the process is not the image's.
    private(set) var writableEnd: UInt = 0

    /// The symbols of the image at `path`, or nil when it is not a readable 64-bit ELF file.
    init?(path: String) {
        self.path = path
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        guard let header = Self.read(descriptor, at: 0, count: 64), header.prefix(5) == [0x7F, 0x45, 0x4C, 0x46, 2] else {
            return nil
        }
        let programHeaders = Int(truncatingIfNeeded: header.load(UInt64.self, at: 32))
        let programHeaderSize = Int(header.load(UInt16.self, at: 54))
        let programHeaderCount = Int(header.load(UInt16.self, at: 56))
        let sectionHeaders = Int(truncatingIfNeeded: header.load(UInt64.self, at: 40))
        let sectionHeaderSize = Int(header.load(UInt16.self, at: 58))
        let sectionCount = Int(header.load(UInt16.self, at: 60))
        guard programHeaderSize >= 56, sectionHeaderSize >= 64, sectionCount < 65_536, programHeaderCount < 65_536,
            let segments = Self.read(descriptor, at: programHeaders, count: programHeaderSize * programHeaderCount),
            let sections = Self.read(descriptor, at: sectionHeaders, count: sectionHeaderSize * sectionCount)
        else { return nil }
        lowestLoadAddress =
            (0..<programHeaderCount).compactMap { index -> UInt? in
                let base = index * programHeaderSize
                guard segments.load(UInt32.self, at: base) == 1 else { return nil }  // PT_LOAD
                return UInt(segments.load(UInt64.self, at: base + 16)) & ~0xFFF
            }.min() ?? 0
        writableEnd =
            (0..<programHeaderCount).compactMap { index -> UInt? in
                let base = index * programHeaderSize
                // PT_LOAD with PF_W: its virtual address plus its size in memory.
                guard segments.load(UInt32.self, at: base) == 1, segments.load(UInt32.self, at: base + 4) & 2 != 0 else {
                    return nil
                }
                let end = UInt(segments.load(UInt64.self, at: base + 16)) &+ UInt(segments.load(UInt64.self, at: base + 40))
                return (end &+ 0xFFF) & ~0xFFF
            }.max() ?? 0
        for index in 0..<sectionCount {
            let base = index * sectionHeaderSize
            guard sections.load(UInt32.self, at: base + 4) == 2 else { continue }  // SHT_SYMTAB
            let offset = Int(truncatingIfNeeded: sections.load(UInt64.self, at: base + 24))
            let size = Int(truncatingIfNeeded: sections.load(UInt64.self, at: base + 32))
            let link = Int(sections.load(UInt32.self, at: base + 40))
            guard link < sectionCount, size < 1 << 30, let table = Self.read(descriptor, at: offset, count: size) else { return nil }
            let stringBase = link * sectionHeaderSize
            stringTableOffset = Int(truncatingIfNeeded: sections.load(UInt64.self, at: stringBase + 24))
            stringTableSize = Int(truncatingIfNeeded: sections.load(UInt64.self, at: stringBase + 32))
            for entry in stride(from: 0, to: size - 23, by: 24) {
                let info = table[entry + 4]
                let sectionIndex = table.load(UInt16.self, at: entry + 6)
                let value = UInt(table.load(UInt64.self, at: entry + 8))
                let symbolSize = UInt(table.load(UInt64.self, at: entry + 16))
                // Objects (and thread-locals) with a size, defined in a section.
                guard info & 0xF == 1, symbolSize > 0, sectionIndex != 0, sectionIndex < 0xFF00 else { continue }
                symbols.append((value, symbolSize, table.load(UInt32.self, at: entry)))
            }
            break
        }
        symbols.sort { $0.value < $1.value }
    }

    /// The symbol that contains the image address `address` (an address in the process minus
    /// the image's bias), and the offset into it.
    func symbol(containing address: UInt) -> (name: String, offset: UInt)? {
        symbolExtent(containing: address).map { ($0.name, address - $0.start) }
    }

    /// The start, the size and the name of the symbol that contains the image address `address`.
    func symbolExtent(containing address: UInt) -> (start: UInt, size: UInt, name: String)? {
        var low = 0
        var high = symbols.count
        while low < high {
            let middle = (low + high) / 2
            if symbols[middle].value <= address { low = middle + 1 } else { high = middle }
        }
        // Symbols may nest (a struct and its parts): look back a little for one that contains it.
        var candidate = low - 1
        while candidate >= 0, candidate >= low - 8 {
            let symbol = symbols[candidate]
            if address < symbol.value &+ symbol.size, let name = name(at: symbol.name) {
                return (symbol.value, symbol.size, name)
            }
            candidate -= 1
        }
        return nil
    }

    private func name(at offset: UInt32) -> String? {
        guard Int(offset) < stringTableSize else { return nil }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var position = stringTableOffset &+ Int(offset)
        while bytes.count < 16_384, let chunk = Self.read(descriptor, at: position, count: 512, partial: true), !chunk.isEmpty {
            if let end = chunk.firstIndex(of: 0) {
                bytes += chunk[..<end]
                return String(decoding: bytes, as: UTF8.self)
            }
            bytes += chunk
            position &+= chunk.count
        }
        return nil
    }

    private static func read(_ descriptor: Int32, at offset: Int, count: Int, partial: Bool = false) -> [UInt8]? {
        guard count >= 0, offset >= 0 else { return nil }
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset &+ done)) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { break }
            done += got
        }
        guard done == count || partial else { return nil }
        return Array(bytes[..<done])
    }
}

extension Array where Element == UInt8 {
    /// The little-endian integer at `offset`.
    fileprivate func load<T: FixedWidthInteger>(_: T.Type, at offset: Int) -> T {
        guard offset >= 0, offset + MemoryLayout<T>.size <= count else { return 0 }
        return withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: T.self) }
    }
}
