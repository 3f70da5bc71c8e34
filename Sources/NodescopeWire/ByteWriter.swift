/// Stores the protocol's primitive encodings into the bytes of one frame.
///
/// Every integer is little-endian and fixed width. ``FrameEncoder`` grows the caller's buffer by
/// the frame's computed size and lets the writer fill it in place.
struct ByteWriter {
    // The frame's bytes, already part of the caller's buffer (zeroed) and exactly as long as the
    // frame: each field is stored in place, with no growth or uniqueness check per byte.
    private let bytes: UnsafeMutableRawBufferPointer
    /// How many bytes were written.
    private(set) var offset = 0

    init(into bytes: UnsafeMutableRawBufferPointer) {
        self.bytes = bytes
    }

    /// Whether `count` more bytes fit: a size computed wrongly leaves fields out (and the frame
    /// malformed, which the tests catch) rather than writing past the frame.
    private func fits(_ count: Int) -> Bool {
        assert(offset + count <= bytes.count, "a field past the frame's computed size")
        return offset + count <= bytes.count
    }

    mutating func write<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        guard fits(MemoryLayout<T>.size) else { return }
        bytes.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
    }

    mutating func write(_ value: Bool) {
        write(UInt8(value ? 1 : 0))
    }

    /// Writes a `str`: a u16 byte count, then the UTF-8 bytes, cut as ``encodedLength(of:)-(String)`` says.
    mutating func write(_ value: String, limit: Int = WireLimits.maxStringBytes) {
        var value = value
        value.withUTF8 { utf8 in
            let count = ByteWriter.truncatedLength(of: utf8, limit: limit)
            write(UInt16(truncatingIfNeeded: count))
            copy(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: utf8[0..<count])))
        }
    }

    /// Writes a `bytes` field: a u32 byte count, then the bytes, cut to at most
    /// ``WireLimits/maxBodyBytes``.
    mutating func write(body: [UInt8]) {
        let count = Swift.min(body.count, WireLimits.maxBodyBytes)
        write(UInt32(truncatingIfNeeded: count))
        body.withUnsafeBytes { copy(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
    }

    private mutating func copy(_ source: UnsafeRawBufferPointer) {
        guard !source.isEmpty, fits(source.count) else { return }
        UnsafeMutableRawBufferPointer(rebasing: bytes[offset..<(offset + source.count)]).copyMemory(from: source)
        offset += source.count
    }

    /// The size of `value` as a `str` field: 2 bytes of count plus the (possibly cut) UTF-8 bytes.
    static func encodedLength(of value: String, limit: Int = WireLimits.maxStringBytes) -> Int {
        var value = value
        return 2 + value.withUTF8 { truncatedLength(of: $0, limit: limit) }
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
