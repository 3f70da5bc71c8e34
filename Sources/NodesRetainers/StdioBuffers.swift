#if os(Linux)
import Glibc

/// The buffers of the process's C streams (`FILE`), which the scan leaves out: a stream's buffer
/// holds bytes read or about to be written, never a reference, and malloc gives it without
/// clearing it, so past the bytes in use it keeps what a freed block left there, which a
/// conservative scan would take for references (a test once found a path from `_IO_list_all`
/// through a stream to its 4,096-byte buffer, and from there to a test's object).
///
/// glibc links every stream it opened (the three standard ones among them) from `_IO_list_all`
/// through each stream's `_chain`. The fields read are those of glibc's `struct _IO_FILE`, whose
/// layout is part of its ABI on 64-bit Linux.
enum StdioBuffers {
    /// Where glibc's list of streams starts (nil where the C library has none).
    private static let listHead: UInt? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "_IO_list_all") else { return nil }
        return UInt(bitPattern: symbol)
    }()

    /// `_IO_buf_base`, `_IO_save_base` (the buffer, and the one `ungetc` keeps), `_chain`.
    private static let bufferOffsets: [UInt] = [0x38, 0x48]
    private static let chainOffset: UInt = 0x68
    /// More streams than a process opens: a list this long is not glibc's.
    private static let mostStreams = 65_536

    /// The blocks in use that are a stream's buffer, as the memory of `read` has them (a word at
    /// an address, nil where it has none).
    static func blocks(read: (UInt) -> UInt?, index: HeapIndex) -> [Int32] {
        guard MemoryLayout<Int>.size == 8, let head = listHead else { return [] }
        var blocks: [Int32] = []
        var seen = Set<UInt>()
        var stream = read(head) ?? 0
        while stream != 0, stream & 7 == 0, seen.count < mostStreams, seen.insert(stream).inserted {
            for offset in bufferOffsets {
                guard let buffer = read(stream + offset), buffer != 0 else { continue }
                let block = index.block(at: buffer)
                if block >= 0 { blocks.append(block) }
            }
            stream = read(stream + chainOffset) ?? 0
        }
        return blocks
    }
}
#endif
