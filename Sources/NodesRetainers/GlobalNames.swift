import NodesTracking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the global variable at an address of an image's data: from the executable's own symbol
/// table (its globals are local symbols), else from the dynamic linker, demangled by the Swift
/// runtime (`sample_nodes.app`, `Nodes.NodeTracker.shared`).
final class GlobalNames {
    /// The symbol tables read so far in this process, by image path (nil: not a readable ELF
    /// image): an image's table is read once, whichever analysis asks first.
    private static let images = Mutex<[String: ElfSymbols?]>([:])
    private lazy var executable: String? = {
        var buffer = [CChar](repeating: 0, count: 4_096)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return nil }
        return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }()

    /// The holder and the reference for a word at `address` in the data of the image at `path`.
    func name(of address: UInt, image path: String, map: MemoryMap) -> (holder: String, reference: String) {
        let bias = loadBias(of: path, map: map)
        if path != executable, let found = ProcessMemory.dynamicSymbol(containing: address) {
            return (Self.readable(found.name), Self.offset(found.offset))
        }
        if let symbols = symbols(of: path), let bias, let found = symbols.symbol(containing: address &- bias) {
            return (Self.readable(found.name), Self.offset(found.offset))
        }
        let image = path.split(separator: "/").last.map(String.init) ?? path
        return ("a global of \(image)", "+0x" + String(address &- (bias ?? 0), radix: 16))
    }

    /// The Swift runtime's caches that the compiler emits in every image: metadata instantiation
    /// caches (`MI`, `MK`, and `MJ` for noncanonical specializations), singleton metadata
    /// initialization caches (`Ml`, of a class whose superclass is generic or resilient), lazy
    /// metadata and witness table caches (`ML`, `WL`) and demangling caches (`MD`). They point at
    /// what the runtime allocated (metadata, witness tables, its own cache entries), never at an
    /// object: a path from one goes through the runtime's blocks and pools, whose words are the
    /// runtime's own or stale (a loaded run met `type metadata singleton initialization cache for
    /// PlainFlow +8 → a 24-byte heap block +16 → the object`: most likely the block's last word,
    /// past the 16-byte entry, left from the block's earlier use).
    private static let runtimeCacheSuffixes: [String] = ["MI", "MK", "MJ", "Ml", "ML", "WL", "MD"]
    /// The symbols looked at so far, by image: their extents (in image addresses, in order) and
    /// whether they are runtime caches.
    private var cacheVerdicts: [String: [(start: UInt, end: UInt, isCache: Bool)]] = [:]

    /// Whether a word of an image's data is in one of the Swift runtime's caches (see
    /// ``runtimeCacheSuffixes``), by the image's symbol table: a test for the words of one
    /// analysis, over `map`.
    func runtimeCacheTest(map: MemoryMap) -> (_ address: UInt, _ image: String) -> Bool {
        var biases: [String: UInt?] = [:]
        return { [self] address, path in
            let bias: UInt?
            if let known = biases[path] {
                bias = known
            } else {
                bias = loadBias(of: path, map: map)
                biases[path] = bias
            }
            guard let bias else { return false }
            return isRuntimeCache(address &- bias, image: path)
        }
    }

    private func isRuntimeCache(_ imageAddress: UInt, image path: String) -> Bool {
        let known = cacheVerdicts[path] ?? []
        var low = 0
        var high = known.count
        while low < high {
            let middle = (low + high) / 2
            if known[middle].start <= imageAddress { low = middle + 1 } else { high = middle }
        }
        if low > 0, imageAddress < known[low - 1].end { return known[low - 1].isCache }
        guard let symbols = symbols(of: path), let found = symbols.symbolExtent(containing: imageAddress) else { return false }
        let isCache = found.name.hasPrefix("$s") && Self.runtimeCacheSuffixes.contains { found.name.hasSuffix($0) }
        let entry = (start: found.start, end: found.start &+ found.size, isCache: isCache)
        let position = known.firstIndex { $0.start > found.start } ?? known.count
        cacheVerdicts[path, default: []].insert(entry, at: position)
        return isCache
    }

    /// `$s12sample_nodes3appAA7AppFlowCvp` → `sample_nodes.app`; other names as they are.
    static func readable(_ symbol: String) -> String {
        guard var name = ProcessMemory.demangle(symbol) else { return symbol }
        for prefix in ["static ", "variable initialization expression of "] where name.hasPrefix(prefix) {
            name.removeFirst(prefix.count)
        }
        if let typeSeparator = name.range(of: " : ") { name = String(name[..<typeSeparator.lowerBound]) }
        return name
    }

    private static func offset(_ offset: UInt) -> String {
        offset == 0 ? "" : "+\(offset)"
    }

    /// Reads the symbol tables of `paths` now (once per process), so that an analysis in a
    /// forked child finds them read (``FrozenChild``: what it learns goes with it).
    func prepare(images paths: [String]) {
        for path in Set(paths) { _ = symbols(of: path) }
    }

    /// Where the writable data of the image at `path` ends in the process (its `.bss` included),
    /// or nil when its file cannot be read: an anonymous mapping made later can sit right after
    /// an image's data (or be merged by the kernel onto its `.bss`), and what lies past this end
    /// is not the image's.
    static func dataEnd(of path: String, mappings: [MemoryMapping]) -> UInt? {
        guard let symbols = symbols(of: path), symbols.writableEnd > 0, let bias = loadBias(of: path, mappings: mappings) else {
            return nil
        }
        return bias &+ symbols.writableEnd
    }

    private func symbols(of path: String) -> ElfSymbols? {
        Self.symbols(of: path)
    }

    private static func symbols(of path: String) -> ElfSymbols? {
        if let known = Self.images.withLock({ $0[path] }) { return known }
        // Read outside the lock (a large table takes a while); two analyses that race read it
        // twice, and keep one.
        let symbols = ElfSymbols(path: path)
        return Self.images.withLock { images in
            if let known = images[path] { return known }
            images[path] = .some(symbols)
            return symbols
        }
    }

    private func loadBias(of path: String, map: MemoryMap) -> UInt? {
        Self.loadBias(of: path, mappings: map.mappings)
    }

    private static func loadBias(of path: String, mappings: [MemoryMapping]) -> UInt? {
        guard let start = mappings.lazy.filter({ $0.path == path }).map(\.start).min() else { return nil }
        return start &- (symbols(of: path)?.lowestLoadAddress ?? 0)
    }
}

extension String {
    /// The first range of `other` in the string.
    fileprivate func range(of other: String) -> Range<String.Index>? {
        var index = startIndex
        while index < endIndex {
            if self[index...].hasPrefix(other) { return index..<self.index(index, offsetBy: other.count) }
            index = self.index(after: index)
        }
        return nil
    }
}
