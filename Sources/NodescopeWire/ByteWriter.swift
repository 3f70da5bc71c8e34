/// Appends the protocol's primitive encodings to a byte array.
///
/// Every integer is little-endian and fixed width. The writer owns the array while it works;
/// ``FrameEncoder`` swaps the caller's buffer in and out, so nothing is copied.
struct ByteWriter {
    var bytes: [UInt8]

    mutating func write<T: FixedWidthInteger & UnsignedInteger>(_ value: T) {
        // Byte by byte: measured faster than appending the value's bytes as a raw buffer.
        var remaining = value
        for _ in 0..<MemoryLayout<T>.size {
            bytes.append(UInt8(truncatingIfNeeded: remaining))
            remaining >>= 8
        }
    }

    mutating func write(_ value: Bool) {
        bytes.append(value ? 1 : 0)
    }

    /// Writes a `str`: a u16 byte count, then the UTF-8 bytes, cut as ``encodedLength(of:)-(String)`` says.
    mutating func write(_ value: String, limit: Int = WireLimits.maxStringBytes) {
        var value = value
        value.withUTF8 { utf8 in
            let count = ByteWriter.truncatedLength(of: utf8, limit: limit)
            write(UInt16(truncatingIfNeeded: count))
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[0..<count]))
        }
    }

    /// Writes a `bytes` field: a u32 byte count, then the bytes, cut to at most
    /// ``WireLimits/maxBodyBytes``.
    mutating func write(body: [UInt8]) {
        let count = Swift.min(body.count, WireLimits.maxBodyBytes)
        write(UInt32(truncatingIfNeeded: count))
        body.withUnsafeBufferPointer { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: $0[0..<count])) }
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
