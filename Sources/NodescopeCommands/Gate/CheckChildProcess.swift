import Foundation
import Glibc
import NodescopeReports
import NodescopeSocket
import Synchronization

/// The pid that SIGINT, SIGTERM and SIGHUP are forwarded to: 0 before the command starts, -1 once it ended.
private let forwardingTarget = Atomic<Int32>(0)
/// A signal that came before the command started; it is forwarded once the command runs.
private let earlySignal = Atomic<Int32>(0)
/// A signal that came after the command ended: it cuts `check`'s wait for the hosts short.
private let lateSignal = Atomic<Int32>(0)
/// `check`'s end of the pipe that its guard reads (-1 when there is none): closing it, or dying,
/// tells the guard to end what is left of the command.
private let guardControl = Atomic<Int32>(-1)
/// The guard's pid, 0 when there is none.
private let guardPID = Atomic<Int32>(0)

/// The signal handler: async-signal-safe (atomics and `kill` only).
private func forwardSignal(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    let target = forwardingTarget.load(ordering: .acquiring)
    if target > 0 {
        // A terminal's Ctrl-C or hangup (sent by the kernel to the whole foreground group)
        // reaches the command by itself; only signals that a process sent to `check` are passed on.
        let fromTheKernel: Int32 = 0x80  // SI_KERNEL
        if let info, info.pointee.si_code == fromTheKernel { return }
        kill(target, signal)
    } else if target == 0 {
        earlySignal.store(signal, ordering: .releasing)
    } else {
        lateSignal.store(signal, ordering: .releasing)
    }
}

/// At exit: tells the guard that `check` is done, and waits until it has ended what is left of
/// the command (its SIGTERM grace and a moment of SIGKILL). A guard that has not ended 5 s
/// later (stopped, wedged) is killed, so `check` never hangs after its report; what it had
/// left to end is then ended by nobody, which a stopped guard could not have done either.
private func releaseGuard() {
    let control = guardControl.exchange(-1, ordering: .acquiringAndReleasing)
    guard control >= 0 else { return }
    close(control)
    let pid = guardPID.load(ordering: .acquiring)
    guard pid > 0 else { return }
    var status: Int32 = 0
    // Polled every 10 ms, up to 5 s: the guard's own SIGTERM grace (2 s) and its SIGKILL.
    for _ in 0..<500 {
        let ended = waitpid(pid, &status, WNOHANG)
        if ended == pid || (ended < 0 && errno != EINTR) { return }
        usleep(10_000)
    }
    kill(pid, SIGKILL)
    while waitpid(pid, &status, 0) < 0, errno == EINTR {}
}

/// The command under check, run as a grandchild: `check` starts its guard (``CheckGuard``, the
/// hidden `nodescope check-guard`), which starts the command with an empty signal mask and
/// every signal at its default disposition, standard input, output and error inherited, and
/// reports its pid and its end. SIGINT, SIGTERM and SIGHUP sent to `check` are forwarded to the
/// command. When `check` exits, however it exits (SIGKILL included), the guard ends every
/// process the command left behind and removes the socket directory if `check` could not.
enum CheckChildProcess {
    /// Runs `arguments` (looked up on `PATH` when the first has no `/`) with `environment`, and
    /// returns how it ended. `directory` is the run's socket directory, which the guard removes
    /// if `check` dies first. Throws when it cannot be started.
    static func run(_ arguments: [String], environment: [String: String], directory: String) async throws(CLIError) -> CheckTermination {
        installForwarding()
        let result: Result<CheckTermination, CLIError> = await withCheckedContinuation { continuation in
            // Reading the guard's reports blocks: a thread of its own, not one of the concurrency pool's few.
            let thread = Thread {
                continuation.resume(returning: spawnAndWait(arguments, environment: environment, directory: directory))
            }
            thread.name = "nodescope-check-wait"
            thread.start()
        }
        return try result.get()
    }

    /// The signal (SIGINT, SIGTERM or SIGHUP) that `check` received after the command ended, if any.
    static var signalAfterExit: Int32? {
        let signal = lateSignal.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    private static func installForwarding() {
        // Touch the atomics first: globals are initialized lazily, which a handler must not do.
        forwardingTarget.store(0, ordering: .releasing)
        earlySignal.store(0, ordering: .releasing)
        lateSignal.store(0, ordering: .releasing)
        _ = guardControl.load(ordering: .relaxed)
        _ = guardPID.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = forwardSignal
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaction(signal, &action, nil) }
    }

    private static func spawnAndWait(
        _ arguments: [String], environment: [String: String], directory: String
    ) -> Result<CheckTermination, CLIError> {
        // This thread lives as long as the command: it takes the forwarded signals even when
        // `check` itself was started with them blocked.
        var forwarded = sigset_t()
        sigemptyset(&forwarded)
        for signal in [SIGINT, SIGTERM, SIGHUP] { sigaddset(&forwarded, signal) }
        pthread_sigmask(SIG_UNBLOCK, &forwarded, nil)

        let reports: Int32
        switch startGuard(arguments, environment: environment, directory: directory) {
        case .success(let descriptor): reports = descriptor
        case .failure(let error):
            forwardingTarget.store(-1, ordering: .releasing)
            return .failure(error)
        }
        defer { close(reports) }
        var commandPID: pid_t = 0
        while true {
            var record: (Int32, Int32) = (0, 0)
            guard readRecord(reports, into: &record) else {
                forwardingTarget.store(-1, ordering: .releasing)
                return .failure(
                    CLIError(
                        "lost track of the command\(commandPID > 0 ? " (pid \(commandPID))" : ""): its guard process ended first"))
            }
            switch CheckGuard.Report(rawValue: record.0) {
            case .started?:
                commandPID = record.1
                forwardingTarget.store(commandPID, ordering: .releasing)
                let early = earlySignal.exchange(0, ordering: .acquiringAndReleasing)
                if early != 0 { kill(commandPID, early) }
            case .failedToStart?:
                forwardingTarget.store(-1, ordering: .releasing)
                return .failure(CLIError(CommandSpawn.describe(.init(code: record.1), running: arguments[0])))
            case .ended?:
                forwardingTarget.store(-1, ordering: .releasing)
                return .success(CheckTermination(waitStatus: record.1))
            case nil:
                continue
            }
        }
    }

    /// Starts the guard with the command; returns `check`'s end of the guard's report pipe.
    private static func startGuard(
        _ arguments: [String], environment: [String: String], directory: String
    ) -> Result<Int32, CLIError> {
        // Both pipes close on exec in `check`; in the guard they land on descriptors 3 and 4.
        // Moved above 100 first, so that neither dup2 can overwrite the other's source.
        var control: [Int32] = [-1, -1]
        var reports: [Int32] = [-1, -1]
        // Close-on-exec from their creation: a process started meanwhile by another thread
        // must not inherit `check`'s end, or the guard would never see it close.
        guard ProcessControl.closeOnExecPipe(&control) else {
            return .failure(CLIError("cannot start the command: pipe failed: \(SystemErrorText.describe(errno))"))
        }
        guard ProcessControl.closeOnExecPipe(&reports) else {
            let reason = SystemErrorText.describe(errno)
            for descriptor in control { close(descriptor) }
            return .failure(CLIError("cannot start the command: pipe failed: \(reason)"))
        }
        let guardEnds = [control[0], reports[1]].map { descriptor in
            defer { close(descriptor) }
            return fcntl(descriptor, F_DUPFD_CLOEXEC, 100)
        }
        defer { for descriptor in guardEnds { close(descriptor) } }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, guardEnds[0], CheckGuard.controlDescriptor)
        posix_spawn_file_actions_adddup2(&actions, guardEnds[1], CheckGuard.reportDescriptor)

        let guardArguments = ["nodescope", "check-guard", "--directory", directory, "--"] + arguments
        let envp: [UnsafeMutablePointer<CChar>?] =
            environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in envp { free(pointer) } }
        // posix_spawnp would look "nodescope" up on PATH: the guard is this very executable.
        let spawned = envp.withUnsafeBufferPointer { environmentBuffer in
            withUnsafePointer(to: &actions) { actionsPointer in
                CommandSpawn.spawn(
                    guardArguments, path: "/proc/self/exe", environment: environmentBuffer.baseAddress!,
                    actions: actionsPointer)
            }
        }
        switch spawned {
        case .failure(let failure):
            close(control[1])
            close(reports[0])
            return .failure(
                CLIError("cannot start the command's guard (nodescope check-guard): \(SystemErrorText.describe(failure.code))"))
        case .success(let pid):
            guardPID.store(pid, ordering: .releasing)
            guardControl.store(control[1], ordering: .releasing)
            atexit { releaseGuard() }
            return .success(reports[0])
        }
    }

    /// Reads one 8-byte report; false at end of file.
    private static func readRecord(_ descriptor: Int32, into record: inout (Int32, Int32)) -> Bool {
        withUnsafeMutableBytes(of: &record) { buffer in
            var filled = 0
            while filled < buffer.count {
                let count = read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
                if count > 0 {
                    filled += count
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    return false
                }
            }
            return true
        }
    }
}
