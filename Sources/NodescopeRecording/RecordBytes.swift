/// Little-endian fields appended to a byte array (the recording's own records).
struct RecordBytes {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { integer(value) }
    mutating func u32(_ value: UInt32) { integer(value) }
    mutating func u64(_ value: UInt64) { integer(value) }

    mutating func string(_ value: String) {
        let utf8 = Array(value.utf8.prefix(4096))
        u16(UInt16(utf8.count))
        bytes += utf8
    }

    private mutating func integer<T: FixedWidthInteger>(_ value: T) {
        var value = value.littleEndian
        withUnsafeBytes(of: &value) { bytes.append(contentsOf: $0) }
    }

    /// Appends an unsigned LEB128 varint: 7 bits a byte, low bits first, high bit = more.
    static func appendVarint(_ value: UInt64, to out: inout [UInt8]) {
        var rest = value
        while rest >= 0x80 {
            out.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        out.append(UInt8(rest))
    }
}

/// Reads little-endian fields from a slice, never past its end.
struct RecordCursor {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    var remaining: Int { bytes.endIndex - position }
    var isAtEnd: Bool { position == bytes.endIndex }

    mutating func u8(_ field: String) throws(RecordingError) -> UInt8 { try integer(field) }
    mutating func u16(_ field: String) throws(RecordingError) -> UInt16 { try integer(field) }
    mutating func u32(_ field: String) throws(RecordingError) -> UInt32 { try integer(field) }
    mutating func u64(_ field: String) throws(RecordingError) -> UInt64 { try integer(field) }

    mutating func string(_ field: String) throws(RecordingError) -> String {
        let count = Int(try u16(field))
        guard count <= 4096, remaining >= count else { throw RecordingError(.corrupt, "the field \(field) ends early") }
        let slice = bytes[position..<(position + count)]
        position += count
        guard let text = String(validating: slice, as: UTF8.self) else {
            throw RecordingError(.corrupt, "the field \(field) is not UTF-8")
        }
        return text
    }

    private mutating func integer<T: FixedWidthInteger>(_ field: String) throws(RecordingError) -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw RecordingError(.corrupt, "the field \(field) ends early") }
        var value: T = 0
        for offset in 0..<size { value |= T(bytes[position + offset]) << (8 * offset) }
        position += size
        return value
    }
}
