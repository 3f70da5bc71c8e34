import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Names the global variable at an address of an image's data: from the executable's own symbol
/// table (its globals are local symbols), else from the dynamic linker, demangled by the Swift
/// runtime (`sample_nodes.app`, `Nodes.NodeTracker.shared`).
final class GlobalNames {
    private var images: [String: ElfSymbols] = [:]
    private var unreadable: Set<String> = []
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

    private func symbols(of path: String) -> ElfSymbols? {
        if let known = images[path] { return known }
        guard !unreadable.contains(path), let symbols = ElfSymbols(path: path) else {
            unreadable.insert(path)
            return nil
        }
        images[path] = symbols
        return symbols
    }

    private func loadBias(of path: String, map: MemoryMap) -> UInt? {
        guard let start = map.mappings.lazy.filter({ $0.path == path }).map(\.start).min() else { return nil }
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
