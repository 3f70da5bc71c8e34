import Testing

@testable import NodescopeWire

@Suite("Encoder limits: long strings and bodies never trap")
struct EncoderLimitTests {
    private func encodedName(_ name: String) -> String? {
        let frame = FrameEncoder.encoded(.defineString(DefineStringFrame(stringID: 1, value: name)))
        guard case .defineString(let definition)? = decodeAll(frame).messages.first else { return nil }
        return definition.value
    }

    @Test("an ASCII string longer than the limit is cut to the limit")
    func asciiTruncation() {
        let name = String(repeating: "a", count: WireLimits.maxStringBytes + 500)
        #expect(encodedName(name) == String(repeating: "a", count: WireLimits.maxStringBytes))
    }

    @Test("a cut never splits a multi-byte scalar", arguments: [1, 2, 3])
    func scalarBoundary(padding: Int) throws {
        // Place a 4-byte scalar so that it straddles the limit at every possible offset.
        let name = String(repeating: "a", count: WireLimits.maxStringBytes - padding) + "🌲🌲"
        let decoded = try #require(encodedName(name))
        #expect(decoded == String(repeating: "a", count: WireLimits.maxStringBytes - padding))
        #expect(decoded.utf8.count <= WireLimits.maxStringBytes)
    }

    @Test("a string of exactly the limit is kept whole")
    func exactLimit() {
        let name = String(repeating: "€", count: 1_365) + "a"  // 4096 bytes
        #expect(name.utf8.count == WireLimits.maxStringBytes)
        #expect(encodedName(name) == name)
    }

    @Test("a bridged or non-ASCII huge string is truncated too")
    func hugeString() throws {
        let name = String(repeating: "中", count: 100_000)
        let decoded = try #require(encodedName(name))
        #expect(decoded == String(repeating: "中", count: 1_365))
    }

    @Test("a body longer than the limit is cut, and the frame stays within the frame limit")
    func bodyTruncation() {
        let body = [UInt8](repeating: 1, count: WireLimits.maxFrameLength * 2)
        let frame = FrameEncoder.encoded(
            .response(
                ControlResponseFrame(
                    requestID: 1, status: .ok, part: 0, isLast: true, body: body
                )))
        #expect(frame.count - 4 <= WireLimits.maxFrameLength)
        guard case .response(let response)? = decodeAll(frame).messages.first else {
            Issue.record("did not decode")
            return
        }
        #expect(response.body.count == WireLimits.maxBodyBytes)
    }

    @Test("the largest request of two full strings fits in one frame")
    func largestRequest() {
        let long = String(repeating: "z", count: 10_000)
        let frame = FrameEncoder.encoded(
            .request(
                ControlRequestFrame(
                    requestID: 1, command: .tree, argument: long, depth: 0, rootPath: long
                )))
        #expect(frame.count == 4 + 1 + 4 + 1 + 2 + 4_096 + 4 + 2 + 4_096)
        #expect(decodeAll(frame).error == nil)
    }

    @Test(
        "a long body splits into parts that rebuild it", arguments: [0, 1, WireLimits.maxBodyBytes, WireLimits.maxBodyBytes + 1, 200_000])
    func parts(count: Int) {
        let body = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let parts = ControlResponseFrame.parts(requestID: 9, status: .ok, body: body)
        #expect(parts.map(\.part) == (0..<UInt32(parts.count)).map { $0 })
        #expect(parts.map(\.isLast) == (0..<parts.count).map { $0 == parts.count - 1 })
        #expect(parts.allSatisfy { $0.body.count <= WireLimits.maxBodyBytes && $0.requestID == 9 })
        #expect(parts.flatMap(\.body) == body)
        let stream = encodeAll(parts.map { .response($0) })
        #expect(decodeAll(stream).messages == parts.map { .response($0) })
    }
}
