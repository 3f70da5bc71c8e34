import NodescopeWire

/// Writes a recording as bytes: the header, then one record per frame of the host stream with
/// its arrival time, then the end, the index and the trailer (docs/RECORDING.md).
///
/// Pure: it appends to an internal buffer that the owner takes with ``takeBytes()`` and writes
/// where it likes. Byte offsets in the index count every byte produced since the header, so
/// the owner must write all of them, in order.
package struct RecordingWriter: Sendable {
    /// The header written first.
    package let header: RecordingHeader
    /// Records appended so far (frames and the recording's own records, the index excepted).
    package private(set) var recordCount: UInt64 = 0
    /// Bytes produced so far, taken or not.
    package private(set) var byteCount: UInt64 = 0
    /// Whether ``finish(_:arrivalNanos:)`` was called.
    package private(set) var isFinished = false
    private var pending: [UInt8] = []
    private var lastArrival: UInt64
    private var index: [RecordingIndexEntry] = []
    private var encoder = FrameEncoder()

    /// Starts a recording with `header`.
    package init(header: RecordingHeader) {
        self.header = header
        self.lastArrival = header.startMonotonicNanos
        var out = RecordBytes()
        out.bytes = RecordingFormat.magic
        out.u16(RecordingFormat.version)
        let body = header.encodedBody()
        out.u32(UInt32(body.count))
        out.bytes += body
        pending = out.bytes
        byteCount = UInt64(pending.count)
    }

    /// Appends one frame of the host stream that arrived at `arrivalNanos` (recorder's clock).
    package mutating func append(_ message: WireMessage, arrivalNanos: UInt64) {
        guard !isFinished else { return }
        beginRecord(arrivalNanos)
        encoder.encode(message, into: &pending)
        endRecord()
    }

    /// Appends the frames of a ``FramePack``, each a record with the pack's arrival: the first
    /// with the delta since the record before, the others with a delta of 0. One pass over
    /// the bytes, into room made once.
    package mutating func append(_ pack: FramePack) {
        guard !isFinished, !pack.isEmpty else { return }
        let arrival = max(pack.arrivalNanos, lastArrival)
        var firstDelta: [UInt8] = []
        RecordBytes.appendVarint(arrival - lastArrival, to: &firstDelta)
        let start = pending.count
        pending.append(contentsOf: repeatElement(0, count: pack.bytes.count + pack.count - 1 + firstDelta.count))
        var records = recordCount
        var base = lastArrival
        var entries: [RecordingIndexEntry] = []
        let stride = UInt64(RecordingFormat.indexStride)
        let firstOffset = byteCount
        let written = pending.withUnsafeMutableBytes { out -> Int in
            pack.bytes.withUnsafeBytes { raw -> Int in
                var offset = 0
                var cursor = start
                while offset + 4 <= raw.count {
                    let length = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
                    let size = 4 + length
                    guard offset + size <= raw.count else { break }
                    if records % stride == 0 {
                        entries.append(
                            RecordingIndexEntry(recordNumber: records, byteOffset: firstOffset + UInt64(cursor - start), arrivalNanos: base)
                        )
                    }
                    if cursor == start {
                        for byte in firstDelta {
                            out[cursor] = byte
                            cursor += 1
                        }
                        base = arrival
                    } else {
                        out[cursor] = 0
                        cursor += 1
                    }
                    (out.baseAddress! + cursor).copyMemory(from: raw.baseAddress! + offset, byteCount: size)
                    cursor += size
                    records += 1
                    offset += size
                }
                return cursor
            }
        }
        pending.removeLast(pending.count - written)
        index += entries
        recordCount = records
        lastArrival = base
        byteCount += UInt64(written - start)
    }

    /// Appends a gap: the recorder lost `count` frames.
    package mutating func appendGap(count: UInt64, arrivalNanos: UInt64) {
        var body = RecordBytes()
        body.u64(count)
        appendOwn(.gap, body.bytes, arrivalNanos: arrivalNanos)
    }

    /// Appends a restart: the session's state starts over; a snapshot should follow.
    package mutating func appendRestart(arrivalNanos: UInt64) {
        appendOwn(.restart, [], arrivalNanos: arrivalNanos)
    }

    /// Ends the recording: the end record, the index and the trailer. Nothing is appended after.
    package mutating func finish(_ end: RecordingEnd, arrivalNanos: UInt64) {
        guard !isFinished else { return }
        appendOwn(.end, [end.rawValue], arrivalNanos: arrivalNanos)
        isFinished = true
        let indexOffset = byteCount
        var body = RecordBytes()
        body.u64(recordCount)
        body.u64(lastArrival)
        body.u8(end.rawValue)
        body.u32(UInt32(index.count))
        for entry in index {
            body.u64(entry.recordNumber)
            body.u64(entry.byteOffset)
            body.u64(entry.arrivalNanos)
        }
        let start = pending.count
        RecordBytes.appendVarint(0, to: &pending)
        Self.frame(.index, body.bytes, into: &pending)
        var trailer = RecordBytes()
        trailer.u64(indexOffset)
        pending += trailer.bytes + RecordingFormat.trailerMagic
        byteCount += UInt64(pending.count - start)
    }

    /// The bytes produced since the last call.
    package mutating func takeBytes() -> [UInt8] {
        defer { pending.removeAll(keepingCapacity: true) }
        return pending
    }

    /// Calls `body` with the bytes produced since the last take, then forgets them, keeping
    /// the buffer for what comes next (a writer thread writes them without a copy).
    package mutating func drainBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        defer { pending.removeAll(keepingCapacity: true) }
        return try pending.withUnsafeBytes(body)
    }

    private mutating func appendOwn(_ type: RecordingRecordType, _ body: [UInt8], arrivalNanos: UInt64) {
        guard !isFinished else { return }
        beginRecord(arrivalNanos)
        Self.frame(type, body, into: &pending)
        endRecord()
    }

    private var recordStart = 0

    private mutating func beginRecord(_ arrivalNanos: UInt64) {
        if recordCount % UInt64(RecordingFormat.indexStride) == 0 {
            index.append(RecordingIndexEntry(recordNumber: recordCount, byteOffset: byteCount, arrivalNanos: lastArrival))
        }
        recordStart = pending.count
        let arrival = max(arrivalNanos, lastArrival)
        RecordBytes.appendVarint(arrival - lastArrival, to: &pending)
        lastArrival = arrival
    }

    private mutating func endRecord() {
        byteCount += UInt64(pending.count - recordStart)
        recordCount += 1
    }

    private static func frame(_ type: RecordingRecordType, _ body: [UInt8], into out: inout [UInt8]) {
        var head = RecordBytes()
        head.u32(UInt32(body.count + 1))
        head.u8(type.rawValue)
        out += head.bytes
        out += body
    }
}

/// The frames of one read of a host's socket, as the bytes they arrived in, which share one
/// arrival time: what an event loop hands to a writer on another thread without encoding
/// anything (one copy of the bytes it read).
package struct FramePack: Sendable {
    /// When the frames arrived (the recorder's clock, ns).
    package let arrivalNanos: UInt64
    /// The frames' wire bytes (length, type, payload), one after the other.
    package private(set) var bytes: [UInt8] = []
    /// How many frames it holds.
    package private(set) var count = 0

    /// An empty pack of frames that arrived at `arrivalNanos`, with room for `capacity` bytes.
    package init(arrivalNanos: UInt64, capacity: Int = 0) {
        self.arrivalNanos = arrivalNanos
        bytes.reserveCapacity(capacity)
    }

    /// Whether it holds no frame.
    package var isEmpty: Bool { count == 0 }

    /// Adds `frames` whole frames lying end to end in `bytes`, as a decoder returned them.
    package mutating func add(run bytes: UnsafeRawBufferPointer, frames: Int) {
        guard frames > 0, bytes.count >= 5 * frames else { return }
        self.bytes.append(contentsOf: bytes)
        count += frames
    }

    /// Adds a frame: its wire bytes (length, type and payload). Bytes too short to be a frame,
    /// or whose length prefix does not match their count, are ignored.
    package mutating func add(_ frame: UnsafeRawBufferPointer) {
        guard frame.count >= 5 else { return }
        let length = Int(UInt32(littleEndian: frame.loadUnaligned(as: UInt32.self)))
        guard length + 4 == frame.count else { return }
        bytes.append(contentsOf: frame)
        count += 1
    }
}

/// A place in a recording from which records can be read without reading those before it:
/// the record's number (0-based), its byte offset in the file, and the arrival time of the
/// record before it (the base of its arrival delta).
package struct RecordingIndexEntry: Sendable, Equatable {
    /// How many records come before this one.
    package var recordNumber: UInt64
    /// The offset of the record's first byte in the file.
    package var byteOffset: UInt64
    /// The arrival time (recorder's clock, ns) its delta counts from.
    package var arrivalNanos: UInt64

    /// Creates an entry.
    package init(recordNumber: UInt64, byteOffset: UInt64, arrivalNanos: UInt64) {
        self.recordNumber = recordNumber
        self.byteOffset = byteOffset
        self.arrivalNanos = arrivalNanos
    }
}
