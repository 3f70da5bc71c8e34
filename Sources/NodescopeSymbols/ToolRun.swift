#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One run of a helper tool (the symbolizer, the demangler): `input` on its standard input, its
/// standard output collected, bounded by a deadline. The tool runs in a process group of its own,
/// killed whole (with anything it started) when the deadline passes. Standard error is discarded.
struct ToolRun {
    /// What came back.
    struct Outcome: Equatable {
        /// The tool's standard output.
        var output: [UInt8]
        /// Whether it exited with status 0 before the deadline, its output whole.
        var succeeded: Bool
    }

    /// The most output kept: more ends the run as failed.
    static let maxOutputBytes = 64 << 20

    var executable: String
    var arguments: [String]
    var timeoutSeconds: Double

    /// Runs the tool; a tool that cannot be started yields an empty, failed outcome.
    func run(input: [UInt8]) -> Outcome {
        let failed = Outcome(output: [], succeeded: false)
        var toChild: [Int32] = [-1, -1]
        var fromChild: [Int32] = [-1, -1]
        #if canImport(Glibc)
        let streamType = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let streamType = SOCK_STREAM
        #endif
        // Sockets, not pipes: a write to a child that has gone fails with EPIPE (MSG_NOSIGNAL)
        // instead of raising SIGPIPE in this process; both made close-on-exec at once.
        guard socketpair(AF_UNIX, streamType, 0, &toChild) == 0 else { return failed }
        guard socketpair(AF_UNIX, streamType, 0, &fromChild) == 0 else {
            close(toChild[0])
            close(toChild[1])
            return failed
        }
        let deadline = ToolRun.now() + max(0, timeoutSeconds)
        guard let pid = spawn(stdin: toChild[1], stdout: fromChild[1]) else {
            for fd in toChild + fromChild { close(fd) }
            return failed
        }
        close(toChild[1])
        close(fromChild[1])
        var inputFD = toChild[0]
        let outputFD = fromChild[0]
        _ = fcntl(inputFD, F_SETFL, fcntl(inputFD, F_GETFL) | O_NONBLOCK)
        _ = fcntl(outputFD, F_SETFL, fcntl(outputFD, F_GETFL) | O_NONBLOCK)
        if input.isEmpty {
            close(inputFD)
            inputFD = -1
        }

        var output: [UInt8] = []
        var written = 0
        var complete = false
        var buffer = [UInt8](repeating: 0, count: 65_536)
        loop: while true {
            let remaining = deadline - ToolRun.now()
            guard remaining > 0 else { break }
            var fds = [pollfd(fd: outputFD, events: Int16(POLLIN), revents: 0)]
            if inputFD >= 0 { fds.append(pollfd(fd: inputFD, events: Int16(POLLOUT), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000 + 1, 60_000)))
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            if inputFD >= 0, fds[1].revents != 0 {
                let sent = input.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return 0 }
                    return send(inputFD, base + written, raw.count - written, Int32(MSG_NOSIGNAL))
                }
                if sent > 0 { written += sent }
                if written == input.count || (sent < 0 && errno != EAGAIN && errno != EINTR) {
                    close(inputFD)
                    inputFD = -1
                }
            }
            if fds[0].revents != 0 {
                while true {
                    let count = buffer.withUnsafeMutableBytes { read(outputFD, $0.baseAddress, $0.count) }
                    if count > 0 {
                        output.append(contentsOf: buffer[0..<count])
                        if output.count > ToolRun.maxOutputBytes { break loop }
                        continue
                    }
                    if count == 0 {
                        complete = true
                        break loop
                    }
                    if errno == EINTR { continue }
                    if errno == EAGAIN { break }
                    break loop
                }
            }
        }
        if inputFD >= 0 { close(inputFD) }
        close(outputFD)
        let exitedCleanly = ToolRun.reap(pid, before: complete ? deadline : 0)
        return Outcome(output: output, succeeded: complete && exitedCleanly)
    }

    private func spawn(stdin: Int32, stdout: Int32) -> pid_t? {
        #if canImport(Glibc)
        var actions = posix_spawn_file_actions_t()
        var attributes = posix_spawnattr_t()
        #else
        var actions: posix_spawn_file_actions_t?
        var attributes: posix_spawnattr_t?
        #endif
        guard posix_spawn_file_actions_init(&actions) == 0 else { return nil }
        defer { posix_spawn_file_actions_destroy(&actions) }
        guard posix_spawnattr_init(&attributes) == 0 else { return nil }
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawn_file_actions_adddup2(&actions, stdin, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawnattr_setpgroup(&attributes, 0)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        return status == 0 ? pid : nil
    }

    /// Waits for `pid` until `deadline`; kills its group when it is still running then. True when
    /// it exited with status 0 in time.
    private static func reap(_ pid: pid_t, before deadline: Double) -> Bool {
        var status: Int32 = 0
        while true {
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid { return (status & 0x7F) == 0 && ((status >> 8) & 0xFF) == 0 }
            if result < 0, errno != EINTR { return false }
            if now() >= deadline { break }
            usleep(2_000)
        }
        kill(-pid, SIGKILL)
        kill(pid, SIGKILL)
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return false
    }

    /// Seconds on the monotonic clock.
    static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
