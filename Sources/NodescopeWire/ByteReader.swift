/// Reads the protocol's primitive encodings from one frame's payload, with every bound checked.
///
/// The reader works on raw memory that the caller keeps alive (``FrameDecoder`` reads inside
/// `withUnsafeBytes` on its buffer). Every read first checks that enough bytes remain and throws
/// ``WireError/Code/truncatedPayload`` otherwise, so no input can make it read out of bounds.
struct ByteReader {
    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    /// The frame type, for error messages.
    let frameType: FrameType

    init(_ bytes: UnsafeRawBufferPointer, frameType: FrameType) {
        self.bytes = bytes
        self.offset = 0
        self.frameType = frameType
    }

    var remaining: Int { bytes.count - offset }

    mutating func readUInt8(_ field: StaticString) throws(WireError) -> UInt8 {
        try require(1, for: field)
        let value = bytes[offset]
        offset += 1
        return value
    }

    mutating func readUInt16(_ field: StaticString) throws(WireError) -> UInt16 {
        try readInteger(field)
    }

    mutating func readUInt32(_ field: StaticString) throws(WireError) -> UInt32 {
        try readInteger(field)
    }

    mutating func readUInt64(_ field: StaticString) throws(WireError) -> UInt64 {
        try readInteger(field)
    }

    mutating func readBool(_ field: StaticString) throws(WireError) -> Bool {
        let value = try readUInt8(field)
        switch value {
        case 0: return false
        case 1: return true
        default: throw invalid(field, "\(value)", allowed: "0 or 1")
        }
    }

    /// Reads a u8 that must be the raw value of `T`.
    mutating func readEnum<T: RawRepresentable & CaseIterable>(
        _ type: T.Type,
        _ field: StaticString
    ) throws(WireError) -> T where T.RawValue == UInt8 {
        let raw = try readUInt8(field)
        guard let value = T(rawValue: raw) else {
            let allowed = T.allCases.map { "\($0.rawValue) \($0)" }.joined(separator: ", ")
            throw invalid(field, "\(raw)", allowed: allowed)
        }
        return value
    }

    /// Reads a u64 node id, which is never 0.
    mutating func readNodeID(_ field: StaticString) throws(WireError) -> UInt64 {
        let value = try readUInt64(field)
        guard value != 0 else { throw invalid(field, "0", allowed: "node ids start at 1") }
        return value
    }

    /// Reads a `str`: u16 byte count, then that many bytes of valid UTF-8.
    mutating func readString(_ field: StaticString, limit: Int = WireLimits.maxStringBytes) throws(WireError) -> String {
        let count = Int(try readUInt16(field))
        guard count <= limit else {
            throw WireError(
                .stringTooLong,
                "\(frameType) \(field) of \(count) bytes exceeds the \(limit)-byte string limit"
            )
        }
        try require(count, for: field)
        let utf8 = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)])
        guard let value = String(validating: utf8.assumingMemoryBound(to: UInt8.self), as: UTF8.self) else {
            throw WireError(.invalidUTF8, "\(frameType) \(field) is not valid UTF-8")
        }
        offset += count
        return value
    }

    /// Reads a `bytes` field: u32 byte count, then that many bytes.
    mutating func readBody(_ field: StaticString) throws(WireError) -> [UInt8] {
        let count32 = try readUInt32(field)
        guard count32 <= UInt32(WireLimits.maxBodyBytes) else {
            throw WireError(
                .invalidValue,
                "\(frameType) \(field) of \(count32) bytes exceeds the \(WireLimits.maxBodyBytes)-byte body limit"
            )
        }
        let count = Int(count32)
        try require(count, for: field)
        let body = [UInt8](UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
        offset += count
        return body
    }

    /// Compares the next four bytes with the hello magic.
    mutating func readMagic() throws(WireError) {
        let word: UInt32 = try readInteger("magic")
        guard word == WireLimits.magicWord else {
            let hex = withUnsafeBytes(of: word.littleEndian) { raw in
                raw.map { ByteReader.hex($0) }.joined(separator: " ")
            }
            throw WireError(.badMagic, "hello starts with \(hex) instead of the magic 4E 53 43 50 (\"NSCP\")")
        }
    }

    func invalid(_ field: StaticString, _ value: String, allowed: String) -> WireError {
        WireError(.invalidValue, "\(frameType) \(field) \(value) is not valid (\(allowed))")
    }

    private mutating func readInteger<T: FixedWidthInteger>(_ field: StaticString) throws(WireError) -> T {
        try require(MemoryLayout<T>.size, for: field)
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: T.self)
        offset += MemoryLayout<T>.size
        return T(littleEndian: value)
    }

    private func require(_ count: Int, for field: StaticString) throws(WireError) {
        guard count <= remaining else {
            throw WireError(
                .truncatedPayload,
                "\(frameType) payload ends inside \(field): needs \(count) bytes at offset \(offset), has \(remaining)"
            )
        }
    }

    static func hex(_ byte: UInt8) -> String {
        let digits: [Character] = ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "A", "B", "C", "D", "E", "F"]
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
