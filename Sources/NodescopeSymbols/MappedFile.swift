#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file mapped read-only, whole: read through bounds-checked accessors, never trapping
/// on a short or hostile file. Unmapped when released.
final class MappedFile {
    /// The mapped bytes (empty for an empty file).
    let bytes: UnsafeRawBufferPointer
    private let base: UnsafeMutableRawPointer?

    /// Maps `path`; nil when it cannot be opened (missing, another user's), is not a regular file,
    /// or is empty or too large to map.
    init?(path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            UInt64(info.st_size) <= MappedFile.maxBytes
        else { return nil }
        let size = Int(info.st_size)
        guard let pointer = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), pointer != MAP_FAILED else { return nil }
        base = pointer
        bytes = UnsafeRawBufferPointer(start: pointer, count: size)
    }

    deinit {
        if let base { munmap(base, bytes.count) }
    }

    /// The largest file mapped: 4 GiB (a debug binary is a few hundred MiB).
    static let maxBytes: UInt64 = 4 << 30

    /// The little-endian integer of `T`'s size at `offset`, or nil past the end.
    func load<T: FixedWidthInteger>(_: T.Type, at offset: UInt64) -> T? {
        let size = UInt64(MemoryLayout<T>.size)
        guard offset <= UInt64(bytes.count), size <= UInt64(bytes.count) - offset else { return nil }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: Int(offset), as: T.self))
    }

    /// Whether `[offset, offset + count)` is inside the file.
    func contains(offset: UInt64, count: UInt64) -> Bool {
        offset <= UInt64(bytes.count) && count <= UInt64(bytes.count) - offset
    }

    /// The NUL-terminated bytes at `offset`, at most `limit` of them before the NUL; nil when
    /// out of range, unterminated within the limit, or empty.
    func cString(at offset: UInt64, limit: Int) -> UnsafeRawBufferPointer? {
        guard offset < UInt64(bytes.count) else { return nil }
        let start = Int(offset)
        let end = min(bytes.count, start + limit + 1)
        var index = start
        while index < end {
            if bytes[index] == 0 {
                guard index > start else { return nil }
                return UnsafeRawBufferPointer(rebasing: bytes[start..<index])
            }
            index += 1
        }
        return nil
    }
}
