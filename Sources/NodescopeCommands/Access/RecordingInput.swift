import ArgumentParser
import Foundation
import Glibc
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay

/// `--at TIME` of the reading commands on a recording.
struct ReplayOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "With --from a recording: the instant to show: seconds from its start (12.5, 800ms), a wall-clock time (ISO 8601, 2026-11-23T01:15:23.250Z), end, or event:N (after its first N records).",
            valueName: "TIME"))
    var at: String?

    /// The instant asked for (`end` when not given).
    func instant() throws -> ReplayInstant {
        guard let at else { return .end }
        if let instant = ReplayInstant(argument: at) { return instant }
        if let wall = Self.wallClock(at) { return .wall(wall) }
        throw ValidationError(
            "--at \(at) is not an instant; use seconds from the start (12.5), a wall-clock time (2026-11-23T01:15:23Z), end, or event:N")
    }

    /// An ISO 8601 time as ns since the epoch.
    static func wallClock(_ text: String) -> UInt64? {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var date = formatter.date(from: text)
        if date == nil {
            formatter.formatOptions = [.withInternetDateTime]
            date = formatter.date(from: text)
        }
        guard let seconds = date?.timeIntervalSince1970, seconds >= 0, seconds < 1e10 else { return nil }
        return UInt64(seconds * 1e9)
    }
}

/// A recording opened for a reading command, replayed to an instant.
enum RecordingInput {
    /// Whether the file at `path` starts as a recording does. Throws when it is no regular file
    /// (a device, a FIFO, a directory) or is larger than any input may be (``InputFile``).
    static func isRecording(_ path: String) throws(CLIError) -> Bool {
        let bound = max(InputFile.Bound.recording, InputFile.Bound.treeJSON)
        let (descriptor, _) = try InputFile.open(path, bound: bound, what: "a recording or a tree in JSON")
        defer { close(descriptor) }
        var start = [UInt8](repeating: 0, count: RecordingFormat.magic.count)
        let count = start.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        return count == start.count && start == RecordingFormat.magic
    }

    /// Opens the recording at `path` (a clear error, exit 1, when it is none or is damaged
    /// beyond its header), prints its warnings on standard error, and replays it to `instant`.
    static func replay(_ path: String, at instant: ReplayInstant) throws -> RecordingReplay {
        let replay = RecordingReplay.replay(try open(path), at: instant)
        for warning in replay.warnings { Terminal.note("\(path): \(warning)") }
        return replay
    }

    /// Opens the recording at `path`: a clear error, exit 1, when it is none or is damaged
    /// beyond its header.
    static func open(_ path: String) throws -> RecordingReader {
        let bytes = try InputFile.read(path, bound: InputFile.Bound.recording, what: "a recording")
        do {
            return try RecordingReader(bytes: bytes)
        } catch {
            throw CLIError("cannot read \(path): \(error.message)", exitCode: 1)
        }
    }
}
