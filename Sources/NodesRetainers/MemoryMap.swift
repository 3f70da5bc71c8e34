import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One line of `/proc/self/maps`: a range of the address space, its permissions and what backs it.
struct MemoryMapping {
    /// The first address.
    var start: UInt
    /// The address past the end.
    var end: UInt
    var readable: Bool
    var writable: Bool
    var executable: Bool
    /// Shared (`s`) rather than private (`p`).
    var shared: Bool
    /// Where in the file the mapping starts (0 for anonymous memory).
    var fileOffset: UInt64 = 0
    /// The file's inode, 0 for anonymous memory.
    var inode: UInt64
    /// The file, or a pseudo-name (`[heap]`, `[stack]`, `[vvar]` …), or empty.
    var path: String

    /// The length in bytes.
    var length: UInt { end - start }

    /// Anonymous memory (no file; `[heap]`, `[stack]` and `[anon:…]` are anonymous too).
    var isAnonymous: Bool { inode == 0 && (path.isEmpty || path.hasPrefix("[")) }

    /// Inaccessible memory, such as a stack's guard page or a heap's reserve.
    var isGuard: Bool { !readable && !writable && !executable }
}

/// The process's address space as `/proc/self/maps` lists it, sorted by address.
struct MemoryMap {
    /// The mappings, by address.
    let mappings: [MemoryMapping]
    /// The paths of the files mapped executable: the images (the executable, shared objects).
    let imagePaths: Set<String>

    /// The map of `mappings`.
    init(mappings: [MemoryMapping]) {
        self.mappings = mappings.sorted { $0.start < $1.start }
        imagePaths = Set(mappings.lazy.filter { $0.executable && $0.inode != 0 }.map(\.path))
    }

    /// Reads `/proc/self/maps`; nil when it cannot be read.
    static func read() -> MemoryMap? {
        guard let bytes = ProcFile.read("/proc/self/maps") else { return nil }
        var mappings: [MemoryMapping] = []
        var line: [UInt8] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if let mapping = parse(line) { mappings.append(mapping) }
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
            }
        }
        if let mapping = parse(line) { mappings.append(mapping) }
        return MemoryMap(mappings: mappings)
    }

    /// The index of the mapping that contains `address`.
    func index(containing address: UInt) -> Int? {
        var low = 0
        var high = mappings.count
        while low < high {
            let middle = (low + high) / 2
            if mappings[middle].end <= address {
                low = middle + 1
            } else if mappings[middle].start > address {
                high = middle
            } else {
                return middle
            }
        }
        return nil
    }

    /// Whether `length` bytes at `address` lie in one readable mapping.
    func isReadable(_ address: UInt, length: UInt = 8) -> Bool {
        guard let index = index(containing: address) else { return false }
        return mappings[index].readable && address &+ length <= mappings[index].end && address &+ length > address
    }

    /// Whether `address` lies in a mapping of a file that is also mapped executable: an image
    /// (the executable or a shared object), where static metadata and descriptors live.
    func isInImage(_ address: UInt) -> Bool {
        guard let index = index(containing: address) else { return false }
        return imagePaths.contains(mappings[index].path)
    }

    /// Where the code at `address` comes from: the file of an executable mapping and the
    /// offset in it, for a symbolizer to name (a closure's function); nil for any other memory.
    func codeSite(of address: UInt) -> (image: String, fileOffset: UInt64)? {
        guard let index = index(containing: address) else { return nil }
        let mapping = mappings[index]
        guard mapping.executable, mapping.inode != 0, mapping.path.hasPrefix("/") else { return nil }
        return (mapping.path, mapping.fileOffset &+ UInt64(address &- mapping.start))
    }

    /// `start-end perms offset dev inode path`.
    private static func parse(_ line: [UInt8]) -> MemoryMapping? {
        var fields: [ArraySlice<UInt8>] = []
        var index = 0
        while index < line.count, fields.count < 5 {
            while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
            let begin = index
            while index < line.count, line[index] != UInt8(ascii: " ") { index += 1 }
            if begin < index { fields.append(line[begin..<index]) }
        }
        guard fields.count == 5, let dash = fields[0].firstIndex(of: UInt8(ascii: "-")),
            let start = hex(fields[0][..<dash]), let end = hex(fields[0][(dash + 1)...]), end > start,
            fields[1].count >= 4, let inode = UInt64(String(decoding: fields[4], as: UTF8.self)),
            let fileOffset = hex(fields[2])
        else { return nil }
        while index < line.count, line[index] == UInt8(ascii: " ") { index += 1 }
        let permissions = Array(fields[1])
        return MemoryMapping(
            start: start, end: end, readable: permissions[0] == UInt8(ascii: "r"),
            writable: permissions[1] == UInt8(ascii: "w"), executable: permissions[2] == UInt8(ascii: "x"),
            shared: permissions[3] == UInt8(ascii: "s"), fileOffset: UInt64(fileOffset), inode: inode,
            path: String(decoding: line[index...], as: UTF8.self))
    }

    private static func hex(_ digits: ArraySlice<UInt8>) -> UInt? {
        UInt(String(decoding: digits, as: UTF8.self), radix: 16)
    }
}

/// Whole small files of `/proc`, read without Foundation.
enum ProcFile {
    /// The bytes of `path`, or nil when it cannot be opened.
    static func read(_ path: String) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        return bytes
    }

    /// The text of `path` without its trailing newline, or nil.
    static func text(_ path: String) -> String? {
        guard var bytes = read(path) else { return nil }
        while bytes.last == UInt8(ascii: "\n") { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}
