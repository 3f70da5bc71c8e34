import Glibc
import NIOPosix
import NodescopeControlCodec
import NodescopeRecording
import NodescopeSocket
import NodescopeWire
import Synchronization

/// One recording file and its writer, off the event loop: the loop hands over batches of
/// frames with ``enqueue(_:)``, which never blocks (a bounded queue; a full queue refuses the
/// batch, and the loop counts a gap); a job on a thread pool encodes and writes them.
final class RecordingSink: Sendable {
    /// What the loop hands over.
    enum Item: Sendable {
        case frame(WireMessage, arrival: UInt64)
        /// Frames as the host sent them (the usual case: no encoding on either thread).
        case frames(FramePack)
        case gap(UInt64, arrival: UInt64)
        case restart(arrival: UInt64)
        case finish(RecordingEnd, arrival: UInt64)

        /// The frames it stands for (what the queue's bound counts).
        var frameCount: Int {
            switch self {
            case .frame: 1
            case .frames(let pack): pack.count
            case .gap, .restart, .finish: 1
            }
        }
    }

    /// How a finished recording went.
    typealias Outcome = ControlBody.RecordingOutcome

    let path: String
    private let pool: NIOThreadPool
    private let maxQueued: Int
    private let onFinished: @Sendable (Outcome) -> Void
    private let queue = Mutex<(items: [Item], frames: Int, draining: Bool, lost: UInt64)>(([], 0, false, 0))
    /// Only the one drain job at a time touches it. `reported`: the failure was handed to
    /// `onFinished` as soon as it happened (the finish then reports nothing more).
    private let file: Mutex<(writer: RecordingWriter, fd: Int32, failure: String?, written: UInt64, reported: Bool)>

    init(
        path: String, header: RecordingHeader, pool: NIOThreadPool, maxQueued: Int,
        onFinished: @escaping @Sendable (Outcome) -> Void
    ) {
        self.path = path
        self.pool = pool
        self.maxQueued = maxQueued
        self.onFinished = onFinished
        self.file = Mutex((RecordingWriter(header: header), -1, nil, 0, false))
    }

    /// Stops the recordings' `pool` once every write queued on it is done. A pool that shuts down
    /// hands the jobs it had not started to a concurrent queue, cancelled, and can return before
    /// they ran: a stopping daemon could end a recording cut short. The pool has one thread,
    /// which takes its jobs in order, so a job queued now runs once every drain queued before it
    /// is done; then the pool stops.
    static func shutDown(_ pool: NIOThreadPool) async {
        _ = try? await pool.runIfActive {}
        try? await pool.shutdownGracefully()
    }

    /// Queues `items` unless that would pass the bound; false when refused. A `finish` is never
    /// refused.
    func enqueue(_ items: [Item]) -> Bool {
        guard !items.isEmpty else { return true }
        let isFinish: Bool
        if case .finish = items.last { isFinish = true } else { isFinish = false }
        let startDrain = queue.withLock { state -> Bool? in
            let frames = items.reduce(0) { $0 + $1.frameCount }
            guard isFinish || state.frames + frames <= maxQueued else { return nil }
            state.items += items
            state.frames += frames
            if state.draining { return false }
            state.draining = true
            return true
        }
        guard let startDrain else { return false }
        if startDrain { pool.submit { [self] _ in drain() } }
        return true
    }

    private func drain() {
        while true {
            let items = queue.withLock { state -> [Item] in
                let taken = state.items
                state.items = []
                state.frames = 0
                if taken.isEmpty { state.draining = false }
                return taken
            }
            guard !items.isEmpty else { return }
            let finished = write(items)
            if let finished { onFinished(finished) }
        }
    }

    /// Encodes and writes `items`; the outcome when they end the recording.
    private func write(_ items: [Item]) -> Outcome? {
        file.withLock { state -> Outcome? in
            var lost: UInt64 = 0
            var finished = false
            for item in items {
                switch item {
                case .frame(let message, let arrival): state.writer.append(message, arrivalNanos: arrival)
                case .frames(let pack): state.writer.append(pack)
                case .gap(let count, let arrival):
                    lost &+= count
                    state.writer.appendGap(count: count, arrivalNanos: arrival)
                case .restart(let arrival): state.writer.appendRestart(arrivalNanos: arrival)
                case .finish(let end, let arrival):
                    state.writer.finish(end, arrivalNanos: arrival)
                    finished = true
                }
            }
            if state.failure == nil, state.fd < 0 {
                state.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
                if state.fd < 0 { state.failure = "cannot open \(path): \(SystemErrorText.describe(errno))" }
            }
            let fd = state.failure == nil ? state.fd : -1
            // Written from the writer's own buffer, which it then reuses (no copy, no new buffer).
            let (count, failure) = state.writer.drainBytes { bytes in (bytes.count, fd >= 0 ? Self.writeAll(bytes, to: fd) : nil) }
            if fd >= 0 {
                if let failure {
                    state.failure = "cannot write \(path): \(failure)"
                } else {
                    state.written &+= UInt64(count)
                }
            }
            let totalLost = queue.withLock {
                $0.lost &+= lost
                return $0.lost
            }
            if let failure = state.failure, !state.reported {
                // Said at once, not when the process ends: the client that asked for the file
                // stops waiting for a recording that cannot be written.
                state.reported = true
                if state.fd >= 0 {
                    close(state.fd)
                    state.fd = -1
                }
                return Outcome(path: path, records: state.writer.recordCount, bytes: state.written, lostFrames: totalLost, error: failure)
            }
            guard finished, !state.reported else { return nil }
            if state.fd >= 0 {
                if close(state.fd) != 0 { state.failure = "cannot write \(path): \(SystemErrorText.describe(errno))" }
                state.fd = -1
            }
            return Outcome(
                path: path, records: state.writer.recordCount, bytes: state.written, lostFrames: totalLost, error: state.failure)
        }
    }

    private static func writeAll(_ raw: UnsafeRawBufferPointer, to fd: Int32) -> String? {
        guard let base = raw.baseAddress else { return nil }
        var offset = 0
        while offset < raw.count {
            let result = Glibc.write(fd, base + offset, raw.count - offset)
            if result < 0 {
                if errno == EINTR { continue }
                return SystemErrorText.describe(errno)
            }
            offset += result
        }
        return nil
    }
}
