import Testing

@testable import NodescopeWire

@Suite("Decoder errors: every code reachable, and the decoder stays poisoned")
struct DecoderErrorTests {
    typealias Code = WireError.Code

    /// One crafted input per violation, with the code and a part of the message it must give.
    static let cases: [(name: String, bytes: [UInt8], code: Code, says: String)] = [
        ("oversized length", Bytes.le32(70_000) + [0x1A], .frameTooLarge, "frame of 70000 bytes exceeds the 65536-byte limit"),
        ("maximum u32 length", Bytes.le32(.max) + [0x1A], .frameTooLarge, "4294967295"),
        ("zero length", Bytes.le32(0) + [0x1A], .emptyFrame, "length 0"),
        ("type 0x00", Bytes.frame(0x00, []), .unknownType, "unknown frame type 0x00"),
        ("type 0x22", Bytes.frame(0x22, Bytes.le64(1)), .unknownType, "unknown frame type 0x22"),
        ("explain of 0 nodes", Bytes.frame(0x20, Bytes.le32(1) + [0, 0]), .invalidValue, "count 0"),
        ("explain of 17 nodes", Bytes.frame(0x20, Bytes.le32(1) + [17, 0]), .invalidValue, "count 17"),
        ("explain of node 0", Bytes.frame(0x20, Bytes.le32(1) + [1, 0] + Bytes.le64(0)), .invalidValue, "nodeID"),
        ("explained outcome 3", Bytes.frame(0x21, Bytes.le32(1) + [3, 0, 0]), .invalidValue, "outcome 3"),
        ("type 0xFF", Bytes.frame(0xFF, []), .unknownType, "0xFF"),
        ("short u64", Bytes.frame(0x12, [1, 2, 3, 4, 5, 6, 7]), .truncatedPayload, "snapshotEnd payload ends inside sequence"),
        ("empty payload", Bytes.frame(0x18, []), .truncatedPayload, "dropped payload ends inside count"),
        ("short string", Bytes.frame(0x10, Bytes.le32(1) + Bytes.le16(10) + [0x41]), .truncatedPayload, "value"),
        ("short body", Bytes.frame(0x42, Bytes.le32(1) + Bytes.le32(10) + [1, 2]), .truncatedPayload, "body"),
        ("trailing byte", Bytes.frame(0x1A, Bytes.le64(1) + [0]), .trailingBytes, "heartbeat frame has 1 trailing bytes"),
        ("trailing bytes", Bytes.frame(0x19, [1, 0, 0, 0]), .trailingBytes, "frame has 3 trailing bytes"),
        (
            "invalid UTF-8", Bytes.frame(0x10, Bytes.le32(1) + Bytes.str([0xC3, 0x28])), .invalidUTF8,
            "defineString value is not valid UTF-8"
        ),
        ("lone continuation byte", Bytes.frame(0x03, [4] + Bytes.str([0x80])), .invalidUTF8, "reason"),
        ("overlong encoding", Bytes.frame(0x10, Bytes.le32(1) + Bytes.str([0xC0, 0xAF])), .invalidUTF8, "UTF-8"),
        ("encoded surrogate", Bytes.frame(0x10, Bytes.le32(1) + Bytes.str([0xED, 0xA0, 0x80])), .invalidUTF8, "UTF-8"),
        ("cut scalar", Bytes.frame(0x01, Bytes.helloPayload(name: [0xF0, 0x9F, 0x8C])), .invalidUTF8, "processName"),
        (
            "string of 4097 bytes",
            Bytes.frame(0x10, Bytes.le32(1) + Bytes.str([UInt8](repeating: 0x61, count: 4_097))),
            .stringTooLong, "defineString value of 4097 bytes exceeds the 4096-byte string limit"
        ),
        ("bad magic", Bytes.frame(0x01, Bytes.helloPayload(magic: Array("NSCQ".utf8))), .badMagic, "4E 53 43 51"),
        ("short magic", Bytes.frame(0x01, [0x4E, 0x53]), .truncatedPayload, "magic"),
        ("hello version 4", Bytes.frame(0x01, Bytes.helloPayload(version: 4)), .unsupportedVersion, "hello names protocol version 4"),
        (
            "a longer hello of version 4",
            Bytes.frame(0x01, Bytes.helloPayload(version: 4) + [1, 2, 3]),
            .unsupportedVersion, "version 4"
        ),
        (
            "accepted version 0",
            Bytes.frame(0x02, Bytes.le16(0) + Bytes.le64(1) + [0] + Bytes.le64(1)),
            .unsupportedVersion, "helloAccepted names protocol version 0"
        ),
        ("role 3", Bytes.frame(0x01, Bytes.helloPayload(role: 3)), .invalidValue, "hello role 3 is not valid (1 host, 2 client)"),
        ("role 0", Bytes.frame(0x01, Bytes.helloPayload(role: 0)), .invalidValue, "role 0"),
        (
            "reserved flag bit",
            Bytes.frame(0x02, Bytes.le16(1) + Bytes.le64(1) + [0b11] + Bytes.le64(1)),
            .invalidValue, "flags 0x03"
        ),
        ("refusal code 0", Bytes.frame(0x03, [0] + Bytes.str("")), .invalidValue, "code 0"),
        ("refusal code 5", Bytes.frame(0x03, [5] + Bytes.str("")), .invalidValue, "code 5"),
        ("string id 0", Bytes.frame(0x10, Bytes.le32(0) + Bytes.str("x")), .invalidValue, "stringID 0"),
        (
            "node id 0",
            Bytes.frame(0x13, Bytes.le64(1) + Bytes.le64(1) + Bytes.le64(0) + Bytes.le64(0) + Bytes.le32(1) + Bytes.le32(0)),
            .invalidValue, "nodeAttached nodeID 0"
        ),
        ("detached node 0", Bytes.frame(0x16, Bytes.le64(1) + Bytes.le64(1) + Bytes.le64(0)), .invalidValue, "nodeID 0"),
        (
            "state 0",
            Bytes.frame(0x15, Bytes.le64(1) + Bytes.le64(1) + Bytes.le64(1) + [0]),
            .invalidValue, "stateChanged state 0 is not valid"
        ),
        ("state 5", Bytes.frame(0x15, Bytes.le64(1) + Bytes.le64(1) + Bytes.le64(1) + [5]), .invalidValue, "state 5"),
        ("goodbye 4", Bytes.frame(0x19, [4]), .invalidValue, "goodbye reason 4"),
        ("site id 0", Bytes.frame(0x1C, Bytes.le32(0) + Bytes.le32(1) + Bytes.le32(1)), .invalidValue, "defineSite siteID 0"),
        ("site file 0", Bytes.frame(0x1C, Bytes.le32(1) + Bytes.le32(0) + Bytes.le32(1)), .invalidValue, "fileStringID 0"),
        ("site cut", Bytes.frame(0x1C, Bytes.le32(1) + Bytes.le32(1)), .truncatedPayload, "defineSite payload ends inside line"),
        (
            "test name 0", Bytes.frame(0x1D, Bytes.le32(1) + Bytes.le32(0) + Bytes.le32(0) + Bytes.le32(0)),
            .invalidValue, "defineTest nameStringID 0"
        ),
        ("origin node 0", Bytes.frame(0x1E, Bytes.le64(0) + Bytes.le32(1) + Bytes.le32(1)), .invalidValue, "nodeOrigin nodeID 0"),
        ("origin long", Bytes.frame(0x1E, Bytes.le64(1) + Bytes.le32(1) + Bytes.le32(1) + [0]), .trailingBytes, "1 trailing bytes"),
        (
            "command 8",
            Bytes.frame(0x40, Bytes.le32(1) + [8] + Bytes.str("") + Bytes.le32(0) + Bytes.str("")),
            .invalidValue, "request command 8"
        ),
        (
            "status 6",
            Bytes.frame(0x41, Bytes.le32(1) + [6] + Bytes.le32(0) + [1] + Bytes.le32(0)),
            .invalidValue, "response status 6"
        ),
        (
            "bool 2",
            Bytes.frame(0x41, Bytes.le32(1) + [0] + Bytes.le32(0) + [2] + Bytes.le32(0)),
            .invalidValue, "response isLast 2 is not valid (0 or 1)"
        ),
        (
            "body over the limit",
            Bytes.frame(
                0x42,
                Bytes.le32(1) + Bytes.le32(UInt32(WireLimits.maxBodyBytes + 1))
                    + [UInt8](repeating: 0, count: WireLimits.maxBodyBytes + 1)),
            .invalidValue, "event body of 65505 bytes exceeds the 65504-byte body limit"
        ),
    ]

    @Test("every error code is reachable")
    func everyCodeReachable() {
        let reached = Set(Self.cases.map(\.code))
        #expect(reached == Set(Code.allCases))
    }

    @Test("each crafted input fails with its code and says what was wrong", arguments: 0..<cases.count)
    func craftedInput(index: Int) {
        let crafted = Self.cases[index]
        let result = decodeAll(crafted.bytes)
        #expect(result.messages.isEmpty, "\(crafted.name)")
        #expect(result.error?.code == crafted.code, "\(crafted.name): \(String(describing: result.error))")
        #expect(result.error?.message.contains(crafted.says) == true, "\(crafted.name): \(String(describing: result.error))")
    }

    @Test("the error is found the same way when the input arrives one byte at a time", arguments: 0..<cases.count)
    func craftedInputByteByByte(index: Int) {
        let crafted = Self.cases[index]
        var decoder = FrameDecoder()
        var found: WireError?
        outer: for byte in crafted.bytes {
            decoder.feed(CollectionOfOne(byte))
            do {
                while try decoder.next() != nil {}
            } catch {
                found = error
                break outer
            }
        }
        if found == nil {
            do { try decoder.finish() } catch { found = error }
        }
        #expect(found?.code == crafted.code, "\(crafted.name)")
    }

    @Test("after an error the decoder keeps throwing the same error and ignores new bytes", arguments: 0..<cases.count)
    func poisoned(index: Int) {
        let crafted = Self.cases[index]
        var decoder = FrameDecoder()
        let valid = FrameEncoder.encoded(.heartbeat(monotonicNanos: 1))
        decoder.feed(valid + crafted.bytes)
        #expect((try? decoder.next()) == .heartbeat(monotonicNanos: 1))
        let first = #expect(throws: WireError.self) { try decoder.next() }
        decoder.feed(valid)
        for _ in 0..<3 {
            let again = #expect(throws: WireError.self) { try decoder.next() }
            #expect(again == first)
        }
        #expect(decoder.error == first)
        #expect(decoder.bufferedByteCount == 0)
        #expect(throws: WireError.self) { try decoder.finish() }
    }

    @Test("an oversized length is rejected after the 4 length bytes, before any payload")
    func oversizedRejectedEarly() {
        var decoder = FrameDecoder()
        decoder.feed(Bytes.le32(UInt32(WireLimits.maxFrameLength + 1)))
        let error = #expect(throws: WireError.self) { try decoder.next() }
        #expect(error?.code == .frameTooLarge)
        #expect(error?.message == "frame of 65537 bytes exceeds the 65536-byte limit")
    }

    @Test("an oversized length is rejected with only the 5 header bytes")
    func oversizedRejectedWithHeader() {
        var decoder = FrameDecoder()
        decoder.feed(Bytes.le32(70_000) + [0x13])
        #expect(throws: WireError(.frameTooLarge, "frame of 70000 bytes exceeds the 65536-byte limit")) {
            try decoder.next()
        }
    }

    @Test("an unknown type is rejected with only the 5 header bytes")
    func unknownTypeRejectedEarly() {
        var decoder = FrameDecoder()
        decoder.feed(Bytes.le32(1_000) + [0x77])
        #expect(throws: WireError(.unknownType, "unknown frame type 0x77")) { try decoder.next() }
    }

    @Test("a frame of exactly the maximum length is accepted")
    func maximumLength() throws {
        let overhead = 1 + 4 + 4  // type, subscription id, body length
        let body = [UInt8](repeating: 3, count: WireLimits.maxBodyBytes)
        // Pad to the exact maximum with the largest legal body, then check the bound by hand.
        let frame = Bytes.frame(0x42, Bytes.le32(1) + Bytes.le32(UInt32(body.count)) + body)
        #expect(frame.count - 4 == overhead + body.count)
        #expect(decodeAll(frame).error == nil)
        // A well-formed length of exactly 65536 passes the size check (and then fails on content).
        let atLimit =
            Bytes.le32(UInt32(WireLimits.maxFrameLength)) + [0x1A]
            + [UInt8](repeating: 0, count: WireLimits.maxFrameLength - 1)
        #expect(decodeAll(atLimit).error?.code == .trailingBytes)
    }

    @Test("needing more bytes is not an error, and finish reports a cut frame")
    func partialFrame() throws {
        let frame = FrameEncoder.encoded(.dropped(count: 5))
        var decoder = FrameDecoder()
        decoder.feed(frame.prefix(8))
        #expect(try decoder.next() == nil)
        #expect(decoder.bufferedByteCount == 8)
        #expect(throws: WireError(.truncatedPayload, "stream ended inside a frame, 8 bytes after the last complete frame")) {
            try decoder.finish()
        }
        #expect(throws: WireError.self) { try decoder.next() }
    }

    @Test("the description names the protocol")
    func description() {
        let error = WireError(.emptyFrame, "frame of length 0 has no type byte")
        #expect(error.description == "nodescope wire: frame of length 0 has no type byte")
    }
}
