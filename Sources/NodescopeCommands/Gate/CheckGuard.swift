import Foundation
import Glibc

/// The guard of a `check` run's command: a small process (`nodescope check-guard`, started by
/// `check` from its own executable) that starts the command and outlives `check` just long
/// enough to take the command down with it, however `check` ends.
///
/// - It is a child subreaper (`PR_SET_CHILD_SUBREAPER`): every process the command starts stays
///   below it, also when its parent exits (a daemonized or orphaned grandchild is adopted by the
///   guard instead of by init), so it can find them all in `/proc`.
/// - It reads a pipe whose only writer is `check`. End of file comes when `check` is done or dead,
///   SIGKILL included: the guard then sends SIGTERM to every process below it, SIGKILL to those
///   left after ``termGraceMicros``, removes the socket directory of the run (when `check` could
///   not), and exits.
/// - It tells `check`, on a second pipe, the command's pid (signals are forwarded to it), or why
///   it could not start, and then how it ended (its `waitpid` status).
/// - It ignores SIGINT, SIGQUIT, SIGHUP and SIGTERM (a Ctrl-C reaches the command directly, and
///   `check` forwards what is sent to it); the command starts with every signal at its default.
enum CheckGuard {
    /// The guard's end of the pipe from `check`: end of file means `check` is gone.
    static let controlDescriptor: Int32 = 3
    /// The guard's end of the pipe to `check`: ``Report`` records.
    static let reportDescriptor: Int32 = 4
    /// How long the processes left below the guard get between SIGTERM and SIGKILL.
    static let termGraceMicros: UInt32 = 2_000_000

    /// What the guard tells `check`: 8 bytes, a kind and a value (host byte order; both ends are
    /// one executable on one machine).
    enum Report: Int32 {
        /// The command started; the value is its pid.
        case started = 1
        /// The command could not start; the value is the `posix_spawn` error.
        case failedToStart = 2
        /// The command ended; the value is its `waitpid` status.
        case ended = 3
    }

    /// Runs the guard for `command`, with `directory` the run's socket directory; never returns.
    static func run(command: [String], directory: String?) -> Never {
        _ = fcntl(controlDescriptor, F_SETFD, FD_CLOEXEC)
        _ = fcntl(reportDescriptor, F_SETFD, FD_CLOEXEC)
        for signal in [SIGINT, SIGQUIT, SIGHUP, SIGTERM, SIGPIPE] { _ = Glibc.signal(signal, SIG_IGN) }
        ProcessControl.becomeChildSubreaper()
        switch CommandSpawn.spawn(command, environment: UnsafePointer(environ)) {
        case .failure(let failure):
            send(.failedToStart, failure.code)
            exit(0)
        case .success(let pid):
            send(.started, pid)
            let reaper = Thread { reap(leader: pid) }
            reaper.name = "nodescope-check-reaper"
            reaper.start()
        }
        var byte: UInt8 = 0
        while true {
            let count = read(controlDescriptor, &byte, 1)
            if count == 0 || (count < 0 && errno != EINTR) { break }
        }
        endDescendants()
        if let directory {
            unlink(directory + "/" + CheckCollector.socketName)
            rmdir(directory)
        }
        exit(0)
    }

    private static func send(_ report: Report, _ value: Int32) {
        var record: (Int32, Int32) = (report.rawValue, value)
        _ = withUnsafeBytes(of: &record) { write(reportDescriptor, $0.baseAddress, $0.count) }
    }

    /// Waits for every child, the command's and the adopted ones, and reports the command's end.
    private static func reap(leader: pid_t) {
        while true {
            var status: Int32 = 0
            let pid = waitpid(-1, &status, 0)
            if pid == leader {
                send(.ended, status)
            } else if pid < 0, errno != EINTR {
                // No child right now: one may be adopted later.
                usleep(50_000)
            }
        }
    }

    /// Ends every process below the guard: SIGTERM, then SIGKILL for what is left.
    private static func endDescendants() {
        var signalled = Set<pid_t>()
        let termUntil = monotonicMicros() + UInt64(termGraceMicros)
        while true {
            let alive = ProcessTable.descendants(of: getpid())
            if alive.isEmpty { return }
            for pid in alive where signalled.insert(pid).inserted { kill(pid, SIGTERM) }
            if monotonicMicros() >= termUntil { break }
            usleep(20_000)
        }
        for _ in 0..<50 {
            let alive = ProcessTable.descendants(of: getpid())
            if alive.isEmpty { return }
            for pid in alive { kill(pid, SIGKILL) }
            usleep(20_000)
        }
    }

    private static func monotonicMicros() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_nsec) / 1_000
    }
}
