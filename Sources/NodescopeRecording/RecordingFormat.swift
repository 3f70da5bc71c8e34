/// The constants of the recording format (docs/RECORDING.md).
package enum RecordingFormat {
    /// The first eight bytes of every recording: `NSREC`, a NUL, CR, LF (a copy mangled as
    /// text, or a file that is something else, is told apart at once).
    package static let magic: [UInt8] = [0x4E, 0x53, 0x52, 0x45, 0x43, 0x00, 0x0D, 0x0A]
    /// The version of the format this module writes and reads.
    package static let version: UInt16 = 1
    /// The last eight bytes of a finished recording, after the index's offset.
    package static let trailerMagic: [UInt8] = [0x4E, 0x53, 0x52, 0x49, 0x44, 0x58, 0x00, 0x01]
    /// Bytes of the trailer: the index record's offset (u64) and ``trailerMagic``.
    package static let trailerBytes = 16
    /// One index entry every this many records.
    package static let indexStride = 1024
    /// The largest header body a reader accepts.
    package static let maxHeaderBytes = 16_384
    /// The largest record of the recording's own (gap, end, restart, index) a reader accepts.
    package static let maxOwnRecordBytes = 64 * 1024 * 1024
}

/// The record types of the recording's own, next to the host stream's frame types (which
/// keep their wire type bytes, 0x10 to 0x3F).
package enum RecordingRecordType: UInt8, Sendable, CaseIterable {
    /// `count` (u64) frames of the host stream were lost by the recorder; a restart follows.
    case gap = 0xE0
    /// The end of the recording: how (u8) the stream ended.
    case end = 0xE1
    /// The session's state starts over (strings too), as on a reconnect; a snapshot follows.
    case restart = 0xE2
    /// The index, after the end: entries every ``RecordingFormat/indexStride`` records.
    case index = 0xE3
}

/// How a recording ended (the `end` record).
package enum RecordingEnd: UInt8, Sendable, Equatable, CaseIterable {
    /// The host's stream ended without a goodbye (killed, crashed, a violation).
    case abnormal = 0
    /// The host said goodbye.
    case normal = 1
    /// The recording was stopped while the process went on.
    case stopped = 2
}
