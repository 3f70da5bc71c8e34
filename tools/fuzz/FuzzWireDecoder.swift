// libFuzzer entry point for the wire decoder. Not a package target: `tools/fuzz-wire` compiles
// this file together with Sources/NodescopeWire into one sanitized binary.
//
// Input: byte 0 chooses how the rest is split into feeds; the rest is the stream.
// Checked: the decoder never traps, and the encoding is canonical, i.e. re-encoding the decoded
// messages reproduces exactly the bytes they were decoded from, and decodes to the same messages.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    guard size > 0 else { return 0 }
    let input = UnsafeBufferPointer(start: data, count: size)
    let control = input[0]
    let stream = UnsafeBufferPointer(rebasing: input[1...])

    // 0 feeds everything at once; otherwise chunks of 1...255 bytes, varied by the low bits.
    let baseChunk = control == 0 ? max(stream.count, 1) : Int(control)
    var decoder = FrameDecoder()
    var messages: [WireMessage] = []
    var offset = 0
    var chunkIndex = 0
    var failed = false
    feeding: while offset < stream.count {
        let chunk = control == 0 ? baseChunk : max(1, (baseChunk >> (chunkIndex % 3)))
        let end = min(offset + chunk, stream.count)
        // Alternate the raw-memory and the generic feed.
        if chunkIndex % 2 == 0 {
            decoder.feed(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: stream[offset..<end])))
        } else {
            decoder.feed(stream[offset..<end])
        }
        offset = end
        chunkIndex += 1
        do {
            while let message = try decoder.next() {
                messages.append(message)
            }
        } catch {
            failed = true
            break feeding
        }
    }
    if !failed {
        _ = try? decoder.finish()
    }

    var encoder = FrameEncoder()
    var reencoded: [UInt8] = []
    for message in messages {
        encoder.encode(message, into: &reencoded)
    }
    guard reencoded.count <= stream.count, reencoded.elementsEqual(stream[0..<reencoded.count]) else {
        fatalError("re-encoding differs from the decoded bytes")
    }
    var again = FrameDecoder()
    again.feed(reencoded)
    for message in messages {
        guard let decoded = try? again.next(), decoded == message else {
            fatalError("re-encoded \(message.frameType) does not decode to the same message")
        }
    }
    return 0
}
