/// Splits a byte stream into frames and decodes them into ``WireMessage``s.
///
/// Feed the bytes as they arrive, in chunks of any size, then call ``next()`` until it returns
/// `nil`:
///
/// ```swift
/// decoder.feed(chunk)
/// while let message = try decoder.next() { handle(message) }
/// ```
///
/// The decoder never traps, whatever the input. It checks a frame's length as soon as the four
/// length bytes are in and its type as soon as the type byte is in, so an oversized frame or an
/// unknown type fails without waiting for the payload. Consumed frames are dropped from the
/// buffer on the next feed, so a caller that drains with ``next()`` after every feed holds at
/// most one partial frame plus the chunk it just fed. Decoding allocates only for the strings
/// and bodies of the messages it returns.
///
/// After ``next()`` throws, the decoder is poisoned: every later call throws the same error and
/// fed bytes are ignored. The connection should be closed.
public struct FrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// The index in `buffer` of the first byte not yet consumed.
    private var readIndex = 0
    private var failure: WireError?
    /// Where the frame last returned by ``next()`` lies in `buffer`.
    private var lastFrame = 0..<0

    /// Creates a decoder at the start of a stream.
    public init() {}

    /// The number of bytes received but not yet consumed as frames (none once it has failed).
    public var bufferedByteCount: Int { failure == nil ? buffer.count - readIndex : 0 }

    /// The bytes held in memory, consumed or not (for tests of the buffering bound).
    var storageByteCount: Int { buffer.count }

    /// The error that poisoned the decoder, if any.
    public var error: WireError? { failure }

    /// Where the frame that ``next()`` returned last lies in the decoder's buffer (empty when
    /// there is none). Frames returned one after the other since the last feed lie end to end,
    /// so a caller can note a run of them and take its bytes at once with ``withBytes(in:_:)``.
    public var lastFrameBounds: Range<Int> { lastFrame }

    /// Calls `body` with the buffer's bytes in `range` (from ``lastFrameBounds``, since the last
    /// feed), or with an empty buffer when the range is not in the buffer.
    public mutating func withBytes<R>(in range: Range<Int>, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let valid = range.lowerBound >= 0 && range.upperBound <= buffer.count ? range : 0..<0
        return try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[valid])) }
    }

    /// Calls `body` with the bytes of the frame that ``next()`` returned last, exactly as they
    /// arrived (length, type and payload), or with an empty buffer when there is none. Valid
    /// until the next feed: a recorder copies them rather than encoding the message again.
    /// (Mutating only so that a decoder stored in a class is not copied for the call.)
    public mutating func withLastFrameBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let range = lastFrame.upperBound <= buffer.count ? lastFrame : 0..<0
        return try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Appends received bytes.
    public mutating func feed<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Appends received bytes from raw memory, such as a socket read buffer.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil else { return }
        compact()
        buffer.append(contentsOf: bytes)
    }

    /// Returns the next complete message, or `nil` if more bytes are needed.
    ///
    /// - Throws: ``WireError`` when the stream violates the protocol; the same error again on
    ///   every later call.
    public mutating func next() throws(WireError) -> WireMessage? {
        if let failure { throw failure }
        do {
            return try decodeNext()
        } catch {
            // The bytes stay until the decoder goes (a failed decoder takes no more): the frames
            // it returned before the error can still be read (``withBytes(in:_:)``).
            failure = error
            lastFrame = 0..<0
            throw error
        }
    }

    /// Checks that the stream ended on a frame boundary; call it when the peer closes.
    ///
    /// - Throws: ``WireError/Code/truncatedPayload`` if a partial frame is buffered, or the
    ///   error that poisoned the decoder.
    public mutating func finish() throws(WireError) {
        if let failure { throw failure }
        let pending = bufferedByteCount
        guard pending == 0 else {
            let error = WireError(.truncatedPayload, "stream ended inside a frame, \(pending) bytes after the last complete frame")
            failure = error
            throw error
        }
    }

    private mutating func decodeNext() throws(WireError) -> WireMessage? {
        let available = buffer.count - readIndex
        guard available >= 4 else { return nil }

        let length = Int(readLength())
        guard length <= WireLimits.maxFrameLength else {
            throw WireError(.frameTooLarge, "frame of \(length) bytes exceeds the \(WireLimits.maxFrameLength)-byte limit")
        }
        guard length >= 1 else {
            throw WireError(.emptyFrame, "frame of length 0 has no type byte")
        }
        guard available >= WireLimits.frameHeaderBytes else { return nil }

        let typeByte = buffer[readIndex + 4]
        guard let type = FrameType(rawValue: typeByte) else {
            throw WireError(.unknownType, "unknown frame type 0x\(ByteReader.hex(typeByte))")
        }
        let frameEnd = readIndex + 4 + length
        guard frameEnd <= buffer.count else { return nil }

        let payloadStart = readIndex + WireLimits.frameHeaderBytes
        // `withUnsafeBytes` only rethrows untyped errors, so the typed error travels in a Result.
        let result = buffer.withUnsafeBytes { all in
            Result { () throws(WireError) -> WireMessage in
                try PayloadDecoder.decode(type, payload: UnsafeRawBufferPointer(rebasing: all[payloadStart..<frameEnd]))
            }
        }
        let message = try result.get()
        lastFrame = readIndex..<frameEnd
        readIndex = frameEnd
        return message
    }

    /// The little-endian u32 at `readIndex`; the caller has checked that four bytes are there.
    private func readLength() -> UInt32 {
        UInt32(buffer[readIndex])
            | UInt32(buffer[readIndex + 1]) << 8
            | UInt32(buffer[readIndex + 2]) << 16
            | UInt32(buffer[readIndex + 3]) << 24
    }

    /// Drops the consumed bytes, keeping the capacity for the next chunk.
    private mutating func compact() {
        lastFrame = 0..<0
        guard readIndex > 0 else { return }
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
        } else {
            buffer.removeSubrange(0..<readIndex)
        }
        readIndex = 0
    }
}
