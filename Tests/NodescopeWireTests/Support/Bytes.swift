@testable import NodescopeWire

/// Little-endian helpers for crafting frames by hand.
enum Bytes {
    static func le16(_ value: UInt16) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func le32(_ value: UInt32) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }
    static func le64(_ value: UInt64) -> [UInt8] { withUnsafeBytes(of: value.littleEndian) { Array($0) } }

    /// A `str` field with an explicit byte content (which may be invalid UTF-8).
    static func str(_ utf8: [UInt8]) -> [UInt8] { le16(UInt16(utf8.count)) + utf8 }
    static func str(_ text: String) -> [UInt8] { str(Array(text.utf8)) }

    /// A frame with a correct length prefix around `type` and `payload`.
    static func frame(_ type: UInt8, _ payload: [UInt8]) -> [UInt8] {
        le32(UInt32(payload.count + 1)) + [type] + payload
    }

    /// A valid hello payload, with fields overridable to make it invalid.
    static func helloPayload(
        magic: [UInt8] = WireLimits.magic,
        version: UInt16 = 1,
        role: UInt8 = 1,
        name: [UInt8] = Array("app".utf8)
    ) -> [UInt8] {
        magic + le16(version) + [role] + le32(7) + le64(1) + le64(2) + str(name)
    }
}

/// Decodes `bytes` fed at once; returns the messages and the error that stopped decoding, if any.
func decodeAll(_ bytes: [UInt8]) -> (messages: [WireMessage], error: WireError?) {
    var decoder = FrameDecoder()
    decoder.feed(bytes)
    var messages: [WireMessage] = []
    do {
        while let message = try decoder.next() {
            messages.append(message)
        }
        try decoder.finish()
        return (messages, nil)
    } catch {
        return (messages, error)
    }
}

/// Encodes all `messages` into one stream.
func encodeAll(_ messages: [WireMessage]) -> [UInt8] {
    var encoder = FrameEncoder()
    var buffer: [UInt8] = []
    for message in messages {
        encoder.encode(message, into: &buffer)
    }
    return buffer
}
