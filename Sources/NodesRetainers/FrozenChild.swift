import NodesTracking
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a piece of work in a forked child, which holds a frozen copy of the process's memory, and
/// brings its answer back through a pipe.
///
/// `fork` copies no byte of memory: parent and child share every page until one writes it (then
/// the writer gets its own copy), so the child reads the memory of the instant of the fork in
/// place, with no thread changing it, in a few milliseconds of the parent's time (its page
/// tables are copied). Whatever goes wrong in the child (a wrong guess read as an address, a lock
/// that a thread of the parent held at the fork) ends the child, never the parent: the parent
/// waits for the answer up to a deadline, then kills the child. A child found waiting on a lock
/// is killed at once (``Outcome/blocked``): the work waits on no lock of its own (its second
/// thread, where it has one, is waited for by spinning and sleeping), so a lock it waits on was
/// held at the fork by a thread that the child does not have, and no one will release it.
///
/// The child runs none of the host's signal handlers, writes no core file, dies with its parent,
/// keeps no descriptor but the pipe's, and ends with `_exit` (no exit handler, no buffer
/// flushed). It is reaped through a pidfd, so a pid that the system reuses is never touched.
enum FrozenChild {
    /// How a run ended.
    enum Outcome {
        /// The child's answer.
        case answer([UInt8])
        /// No child: the fork failed (`EAGAIN`, `ENOMEM`, a sandbox refusing it): the error number.
        case notForked(Int32)
        /// The child did not answer by the deadline and was killed; what it was doing then
        /// (``ProcessMemory/childActivity(_:)``: `running`, `blocked in system call N`, …).
        case timedOut(activity: String)
        /// The child waited on a lock (in `futex`) that a thread of this process held at the fork:
        /// it was killed as soon as that was seen twice, ``lockCheckMilliseconds`` apart.
        case blocked
        /// The child ended without a whole answer (it crashed or was killed).
        case died
    }

    /// The most bytes an answer may have.
    static let maxAnswerBytes = 16 << 20

    /// How often the parent looks whether a child that has not answered yet waits on a lock.
    static let lockCheckMilliseconds: UInt64 = 5

    /// Children that answered but had not exited yet: reaped by later runs.
    private static let unreaped = Mutex<[(pid: Int, pidfd: Int32)]>([])

    /// Runs `work` in a forked child and returns its answer, waiting until `deadline` on `clock`
    /// (host monotonic nanoseconds) at most. `work` runs only in the child.
    static func run(until deadline: UInt64, clock: () -> UInt64, _ work: () -> [UInt8]) -> Outcome {
        reapFinished()
        let reader: Int32
        let writer: Int32
        switch ProcessMemory.pipe() {
        case .failure(let error): return .notForked(error.code)
        case .success(let ends): (reader, writer) = ends
        }
        let child: (pid: Int, pidfd: Int32)
        switch ProcessMemory.forkFrozen(keeping: writer) {
        case .failure(let error):
            close(reader)
            close(writer)
            return .notForked(error.code)
        case .success(let forked):
            child = forked
        }
        if child.pid == 0 {
            answer(work(), to: writer)
        }
        close(writer)
        defer { close(reader) }
        var received: [UInt8] = []
        var expected: Int?
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        var lockWaitsSeen = 0
        while true {
            if let expected, received.count >= expected + 4 {
                finish(child, wait: false)
                return .answer(Array(received[4..<expected + 4]))
            }
            let now = clock()
            guard now < deadline else {
                let activity = ProcessMemory.childActivity(child.pid)
                ProcessMemory.kill(child.pid, pidfd: child.pidfd)
                finish(child, wait: true)
                return .timedOut(activity: activity)
            }
            let milliseconds = Int32(clamping: min((deadline - now + 999_999) / 1_000_000, lockCheckMilliseconds))
            guard ProcessMemory.waitReadable(reader, milliseconds: milliseconds) else {
                // Nothing yet. A child whose thread is in `futex` waits for a lock that a thread
                // of this process held at the fork: no one will ever release it there.
                lockWaitsSeen = received.isEmpty && ProcessMemory.waitsOnLock(child.pid) ? lockWaitsSeen + 1 : 0
                if lockWaitsSeen >= 2 {
                    ProcessMemory.kill(child.pid, pidfd: child.pidfd)
                    finish(child, wait: true)
                    return .blocked
                }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { read(reader, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR || errno == EAGAIN { continue }
            guard count > 0 else {
                finish(child, wait: true)
                return .died
            }
            received += buffer[0..<count]
            if expected == nil, received.count >= 4 {
                let length = received[0..<4].reduce(0) { $0 << 8 | Int($1) }
                guard length <= maxAnswerBytes else {
                    ProcessMemory.kill(child.pid, pidfd: child.pidfd)
                    finish(child, wait: true)
                    return .died
                }
                expected = length
            }
        }
    }

    /// The child's end: writes the answer, length first, and exits at once.
    private static func answer(_ bytes: [UInt8], to writer: Int32) -> Never {
        let length = UInt32(clamping: bytes.count)
        var message = [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
        message += bytes.prefix(Int(length))
        var sent = 0
        while sent < message.count {
            let count = message.withUnsafeBytes { write(writer, $0.baseAddress! + sent, $0.count - sent) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { ProcessMemory.exitNow(1) }
            sent += count
        }
        ProcessMemory.exitNow(0)
    }

    /// Reaps `child`, or keeps it for a later run when it has not exited yet and `wait` is false.
    private static func finish(_ child: (pid: Int, pidfd: Int32), wait: Bool) {
        // Without a pidfd, only a wait now is sure to reap this very child.
        if ProcessMemory.reap(child.pid, pidfd: child.pidfd, wait: wait || child.pidfd < 0) {
            if child.pidfd >= 0 { close(child.pidfd) }
        } else {
            unreaped.withLock { $0.append(child) }
        }
    }

    /// Reaps the children of earlier runs that have exited since.
    static func reapFinished() {
        unreaped.withLock { children in
            children.removeAll { child in
                guard ProcessMemory.reap(child.pid, pidfd: child.pidfd, wait: false) else { return false }
                if child.pidfd >= 0 { close(child.pidfd) }
                return true
            }
        }
    }
}
