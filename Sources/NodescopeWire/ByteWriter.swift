/// Stores the protocol's primitive encodings into memory that the caller has sized exactly.
///
/// ``FrameEncoder`` first computes a frame's size, grows the caller's array by that many bytes
/// and then writes every field in place: no per-field appends, no intermediate arrays. Every
/// integer is little-endian and fixed width.
struct ByteWriter {
    private let base: UnsafeMutableRawPointer
    private let capacity: Int
    private(set) var offset = 0

    init(base: UnsafeMutableRawPointer, capacity: Int) {
        self.base = base
        self.capacity = capacity
    }

    mutating func write<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        let size = MemoryLayout<T>.size
        // The frame size is computed from the same fields, so this only guards against a bug.
        precondition(offset + size <= capacity, "frame size computed too small")
        base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += size
    }

    mutating func write(_ value: Bool) {
        write(UInt8(value ? 1 : 0))
    }

    /// Writes a `str`: a u16 byte count, then the UTF-8 bytes, cut as ``encodedLength(of:)`` says.
    mutating func write(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            let count = ByteWriter.truncatedLength(of: utf8, limit: WireLimits.maxStringBytes)
            write(UInt16(truncatingIfNeeded: count))
            writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(utf8)[0..<count]))
        }
    }

    /// Writes a `bytes` field: a u32 byte count, then the bytes, cut to at most
    /// ``WireLimits/maxBodyBytes``.
    mutating func write(body: [UInt8]) {
        let count = Swift.min(body.count, WireLimits.maxBodyBytes)
        write(UInt32(truncatingIfNeeded: count))
        body.withUnsafeBytes { writeBytes(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    private mutating func writeBytes(_ bytes: UnsafeRawBufferPointer) {
        precondition(offset + bytes.count <= capacity, "frame size computed too small")
        if let source = bytes.baseAddress, bytes.count > 0 {
            (base + offset).copyMemory(from: source, byteCount: bytes.count)
        }
        offset += bytes.count
    }

    /// The size of `value` as a `str` field: 2 bytes of count plus the (possibly cut) UTF-8 bytes.
    static func encodedLength(of value: String) -> Int {
        var value = value
        return 2 + value.withUTF8 { truncatedLength(of: $0, limit: WireLimits.maxStringBytes) }
    }

    /// The size of `body` as a `bytes` field: 4 bytes of count plus the (possibly cut) bytes.
    static func encodedLength(of body: [UInt8]) -> Int {
        4 + Swift.min(body.count, WireLimits.maxBodyBytes)
    }

    /// The largest byte count not above `limit` that ends on a scalar boundary of valid UTF-8.
    static func truncatedLength(of utf8: UnsafeBufferPointer<UInt8>, limit: Int) -> Int {
        guard utf8.count > limit else { return utf8.count }
        var end = limit
        // Step back over continuation bytes (10xxxxxx) so the cut never splits a scalar.
        while end > 0 && utf8[end] & 0b1100_0000 == 0b1000_0000 {
            end -= 1
        }
        return end
    }
}
