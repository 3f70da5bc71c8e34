import NodescopeWire

/// One record of a recording, decoded.
package struct RecordedItem: Sendable, Equatable {
    /// What the record holds.
    package enum Content: Sendable, Equatable {
        /// A frame of the host stream.
        case frame(WireMessage)
        /// The recorder lost this many frames.
        case gap(UInt64)
        /// The session's state starts over; a snapshot follows.
        case restart
        /// The end of the recording.
        case end(RecordingEnd)
    }

    /// The record's number, from 0.
    package var number: UInt64
    /// When it arrived, on the recorder's `CLOCK_MONOTONIC`, ns.
    package var arrivalNanos: UInt64
    /// What it holds.
    package var content: Content
}

/// Reads a recording from its bytes, whatever they are: a recording cut off mid-record opens up
/// to its last whole record (with a warning); a foreign or broken header is an error; nothing
/// traps.
///
/// Opening reads the header and the index from the trailer; a recording without a valid
/// trailer (the recorder was killed) is walked once, record by record without decoding, to
/// build the index. Reading records decodes them from an index entry on.
package struct RecordingReader: Sendable {
    /// The header.
    package let header: RecordingHeader
    /// What was wrong with the file short of an error, one sentence each.
    package private(set) var warnings: [String] = []
    /// Places from which to read, in order; the first is record 0.
    package private(set) var index: [RecordingIndexEntry] = []
    /// How many records can be read (the index record excepted).
    package private(set) var recordCount: UInt64 = 0
    /// The arrival time of the last record (the start's when there is none).
    package private(set) var lastArrivalNanos: UInt64
    /// How the recording ended; nil when it was cut off.
    package private(set) var end: RecordingEnd?
    private let bytes: [UInt8]
    /// The offset after the last whole record.
    private var recordsEnd: Int

    /// Opens a recording from its bytes.
    ///
    /// - Throws: ``RecordingError`` when the bytes are not a recording, of another version, or
    ///   end inside the header.
    package init(bytes: [UInt8]) throws(RecordingError) {
        self.bytes = bytes
        let magic = RecordingFormat.magic
        guard bytes.count >= magic.count, Array(bytes[0..<magic.count]) == magic else {
            throw RecordingError(.notARecording, "it is not a Nodescope recording (it does not start with NSREC)")
        }
        var cursor = RecordCursor(bytes[magic.count...])
        let version = try Self.headerField { () throws(RecordingError) in try cursor.u16("version") }
        guard version == RecordingFormat.version else {
            throw RecordingError(
                .unsupportedVersion,
                "it is a recording of format version \(version); this nodescope reads version \(RecordingFormat.version)")
        }
        let length = Int(try Self.headerField { () throws(RecordingError) in try cursor.u32("header length") })
        guard length <= RecordingFormat.maxHeaderBytes else {
            throw RecordingError(.corrupt, "its header claims \(length) bytes, more than a header can have")
        }
        let bodyStart = magic.count + 6
        guard bytes.count >= bodyStart + length else {
            throw RecordingError(.truncated, "it ends inside its header (\(bytes.count) bytes)")
        }
        header = try RecordingHeader.decode(bytes[bodyStart..<(bodyStart + length)])
        lastArrivalNanos = header.startMonotonicNanos
        recordsEnd = bodyStart + length
        if !readTrailer(recordsStart: bodyStart + length) {
            scan(from: bodyStart + length)
        }
    }

    private static func headerField<T>(_ read: () throws(RecordingError) -> T) throws(RecordingError) -> T {
        do {
            return try read()
        } catch {
            throw RecordingError(.truncated, "it ends inside its header")
        }
    }

    /// The byte offset where the records start.
    private var recordsStart: Int { index.first.map { Int($0.byteOffset) } ?? recordsEnd }

    // MARK: Opening

    /// Reads the index through the trailer; false when there is none that holds together.
    private mutating func readTrailer(recordsStart: Int) -> Bool {
        let trailerBytes = RecordingFormat.trailerBytes
        guard bytes.count >= recordsStart + trailerBytes,
            Array(bytes[(bytes.count - 8)...]) == RecordingFormat.trailerMagic
        else { return false }
        var cursor = RecordCursor(bytes[(bytes.count - trailerBytes)..<(bytes.count - 8)])
        guard let offset64 = try? cursor.u64("index offset"), offset64 >= UInt64(recordsStart),
            offset64 < UInt64(bytes.count - trailerBytes)
        else { return false }
        let offset = Int(offset64)
        guard let record = try? rawRecord(at: offset, limit: bytes.count - trailerBytes),
            record.type == RecordingRecordType.index.rawValue, record.next == bytes.count - trailerBytes
        else { return false }
        var body = RecordCursor(bytes[record.payload])
        do {
            let count = try body.u64("record count")
            let last = try body.u64("last arrival")
            guard let end = RecordingEnd(rawValue: try body.u8("end")) else { return false }
            let entries = Int(try body.u32("entries"))
            guard entries >= 1, body.remaining == entries * 24 else { return false }
            var found: [RecordingIndexEntry] = []
            found.reserveCapacity(entries)
            for _ in 0..<entries {
                let entry = RecordingIndexEntry(
                    recordNumber: try body.u64("record"), byteOffset: try body.u64("offset"), arrivalNanos: try body.u64("arrival"))
                if let previous = found.last {
                    guard entry.recordNumber > previous.recordNumber, entry.byteOffset > previous.byteOffset,
                        entry.arrivalNanos >= previous.arrivalNanos
                    else { return false }
                } else {
                    guard entry.recordNumber == 0, entry.byteOffset == UInt64(recordsStart) else { return false }
                }
                guard entry.byteOffset < offset64, entry.recordNumber < count else { return false }
                found.append(entry)
            }
            index = found
            recordCount = count
            lastArrivalNanos = last
            self.end = end
            recordsEnd = offset
            return true
        } catch {
            return false
        }
    }

    /// Walks the records without decoding them, to find where the whole ones end and to build
    /// the index.
    private mutating func scan(from start: Int) {
        var position = start
        var arrival = header.startMonotonicNanos
        var number: UInt64 = 0
        var entries: [RecordingIndexEntry] = []
        var problem: Incomplete?
        while position < bytes.count {
            let record: RawRecord
            do {
                record = try rawRecord(at: position, limit: bytes.count)
            } catch {
                problem = error
                break
            }
            if record.type == RecordingRecordType.index.rawValue { break }
            if number % UInt64(RecordingFormat.indexStride) == 0 {
                entries.append(RecordingIndexEntry(recordNumber: number, byteOffset: UInt64(position), arrivalNanos: arrival))
            }
            let (sum, overflow) = arrival.addingReportingOverflow(record.delta)
            arrival = overflow ? UInt64.max : sum
            number += 1
            position = record.next
            if record.type == RecordingRecordType.end.rawValue {
                end = record.payload.count == 1 ? RecordingEnd(rawValue: bytes[record.payload.lowerBound]) : nil
                break
            }
        }
        if entries.isEmpty { entries = [RecordingIndexEntry(recordNumber: 0, byteOffset: UInt64(start), arrivalNanos: arrival)] }
        index = entries
        recordCount = number
        lastArrivalNanos = arrival
        recordsEnd = position
        if let problem, !problem.isCut {
            warnings.append(
                "the recording is damaged at byte \(position) (\(problem.message)); it is read up to its last whole record (\(number) records)"
            )
        } else if end == nil {
            warnings.append(
                "the recording was cut off (the recorder stopped before it finished); it is read up to its last whole record (\(number) records)"
            )
        } else {
            warnings.append("the recording has no valid index; it was rebuilt by reading the file once")
        }
    }

    private struct RawRecord {
        var delta: UInt64
        var type: UInt8
        var payload: Range<Int>
        var next: Int
    }

    private struct Incomplete: Error {
        var message: String
        /// Whether the bytes simply ran out (a cut file) rather than holding something impossible.
        var isCut = false
    }

    /// The record at `position`, read structurally; throws when it is incomplete or impossible.
    private func rawRecord(at position: Int, limit: Int) throws(Incomplete) -> RawRecord {
        var at = position
        var delta: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            guard at < limit else { throw Incomplete(message: "a record is cut off in its arrival time", isCut: true) }
            let byte = bytes[at]
            at += 1
            guard shift < 64 else { throw Incomplete(message: "an arrival time is longer than 64 bits") }
            delta |= UInt64(byte & 0x7F) << shift
            shift += 7
            if byte & 0x80 == 0 { break }
        }
        guard limit - at >= 5 else { throw Incomplete(message: "a record is cut off in its length", isCut: true) }
        let length = Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
        let type = bytes[at + 4]
        let own = RecordingRecordType(rawValue: type) != nil
        guard length >= 1 else { throw Incomplete(message: "a record has length 0") }
        guard own || FrameType(rawValue: type) != nil else {
            throw Incomplete(message: "a record has the unknown type 0x\(String(type, radix: 16))")
        }
        guard length <= (own ? RecordingFormat.maxOwnRecordBytes : WireLimits.maxFrameLength) else {
            throw Incomplete(message: "a record claims \(length) bytes")
        }
        guard limit - (at + 4) >= length else { throw Incomplete(message: "a record is cut off in its payload", isCut: true) }
        return RawRecord(delta: delta, type: type, payload: (at + 5)..<(at + 4 + length), next: at + 4 + length)
    }

    // MARK: Reading

    /// The index entry from which to read to reach record `number`.
    package func entry(before number: UInt64) -> RecordingIndexEntry {
        var low = 0
        var high = index.count
        while low < high {
            let middle = (low + high) / 2
            if index[middle].recordNumber <= number { low = middle + 1 } else { high = middle }
        }
        return index[max(low - 1, 0)]
    }

    /// The index entry from which to read to reach the first record that arrived after `arrival`.
    package func entry(beforeArrival arrival: UInt64) -> RecordingIndexEntry {
        var low = 0
        var high = index.count
        while low < high {
            let middle = (low + high) / 2
            if index[middle].arrivalNanos <= arrival { low = middle + 1 } else { high = middle }
        }
        return index[max(low - 1, 0)]
    }

    /// The records from `entry` (the first by default) to the last whole one.
    package func records(from entry: RecordingIndexEntry? = nil) -> Records {
        let start = entry ?? index[0]
        return Records(reader: self, position: Int(start.byteOffset), number: start.recordNumber, arrival: start.arrivalNanos)
    }

    /// The records of a recording in order, each decoded as it is reached.
    package struct Records: Sendable {
        fileprivate let reader: RecordingReader
        fileprivate var position: Int
        /// The number of the next record.
        package private(set) var number: UInt64
        /// The arrival time of the last record read.
        package private(set) var arrival: UInt64

        /// The next record, nil after the last whole one.
        ///
        /// - Throws: ``RecordingError`` (`corrupt`) when a record's frame does not decode; the
        ///   records before it are good.
        package mutating func next() throws(RecordingError) -> RecordedItem? {
            guard position < reader.recordsEnd, number < reader.recordCount else { return nil }
            let record: RawRecord
            do {
                record = try reader.rawRecord(at: position, limit: reader.recordsEnd)
            } catch {
                throw RecordingError(.corrupt, "record \(number + 1) at byte \(position): \(error.message)")
            }
            let (sum, overflow) = arrival.addingReportingOverflow(record.delta)
            arrival = overflow ? UInt64.max : sum
            let content: RecordedItem.Content
            let payload = reader.bytes[record.payload]
            switch RecordingRecordType(rawValue: record.type) {
            case .gap:
                var cursor = RecordCursor(payload)
                guard let count = try? cursor.u64("count"), cursor.isAtEnd else {
                    throw RecordingError(.corrupt, "record \(number + 1) at byte \(position): a gap record of \(payload.count) bytes")
                }
                content = .gap(count)
            case .restart:
                content = .restart
            case .end:
                guard payload.count == 1, let end = payload.first.flatMap(RecordingEnd.init(rawValue:)) else {
                    throw RecordingError(.corrupt, "record \(number + 1) at byte \(position): a bad end record")
                }
                content = .end(end)
            case .index:
                return nil
            case nil:
                let decoded = payload.withUnsafeBytes { raw in
                    Result { () throws(WireError) -> WireMessage in try WireMessage.decode(typeByte: record.type, payload: raw) }
                }
                switch decoded {
                case .success(let message): content = .frame(message)
                case .failure(let error):
                    throw RecordingError(.corrupt, "record \(number + 1) at byte \(position): \(error.message)")
                }
            }
            let item = RecordedItem(number: number, arrivalNanos: arrival, content: content)
            position = record.next
            number += 1
            return item
        }
    }
}
