import Foundation
import Glibc
import NodescopeReports
import Synchronization

/// The pid that SIGINT and SIGTERM are forwarded to: 0 before the command starts, -1 once it ended.
private let forwardingTarget = Atomic<Int32>(0)
/// A signal that came before the command started; it is forwarded once the command runs.
private let earlySignal = Atomic<Int32>(0)
/// A signal that came after the command ended: it cuts `check`'s wait for the hosts short.
private let lateSignal = Atomic<Int32>(0)

/// The signal handler: async-signal-safe (atomics and `kill` only).
private func forwardSignal(_ signal: Int32, _ info: UnsafeMutablePointer<siginfo_t>?, _ context: UnsafeMutableRawPointer?) {
    let target = forwardingTarget.load(ordering: .acquiring)
    if target > 0 {
        // A terminal's Ctrl-C (sent by the kernel to the whole foreground group) reaches the
        // command by itself; only signals that a process sent to `check` are passed on.
        let fromTheKernel: Int32 = 0x80  // SI_KERNEL
        if let info, info.pointee.si_code == fromTheKernel { return }
        kill(target, signal)
    } else if target == 0 {
        earlySignal.store(signal, ordering: .releasing)
    } else {
        lateSignal.store(signal, ordering: .releasing)
    }
}

/// The command under check, run as a child: spawned with an empty signal mask and every signal
/// at its default disposition (a parent such as a test runner may have blocked SIGTERM, and
/// `Foundation.Process` would pass that on), standard input, output and error inherited,
/// SIGINT and SIGTERM sent to `check` forwarded to it, and waited for.
enum CheckChildProcess {
    /// Runs `arguments` (looked up on `PATH` when the first has no `/`) with `environment`, and
    /// returns how it ended. Throws when it cannot be started.
    static func run(_ arguments: [String], environment: [String: String]) async throws(CLIError) -> CheckTermination {
        installForwarding()
        let result: Result<CheckTermination, CLIError> = await withCheckedContinuation { continuation in
            // waitpid blocks: a thread of its own, not one of the concurrency pool's few.
            let thread = Thread { continuation.resume(returning: spawnAndWait(arguments, environment: environment)) }
            thread.name = "nodescope-check-wait"
            thread.start()
        }
        return try result.get()
    }

    /// The signal (SIGINT or SIGTERM) that `check` received after the command ended, if any.
    static var signalAfterExit: Int32? {
        let signal = lateSignal.load(ordering: .acquiring)
        return signal == 0 ? nil : signal
    }

    private static func installForwarding() {
        // Touch the atomics first: globals are initialized lazily, which a handler must not do.
        forwardingTarget.store(0, ordering: .releasing)
        earlySignal.store(0, ordering: .releasing)
        lateSignal.store(0, ordering: .releasing)
        var action = sigaction()
        action.__sigaction_handler.sa_sigaction = forwardSignal
        action.sa_flags = SA_SIGINFO | SA_RESTART
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
    }

    private static func spawnAndWait(_ arguments: [String], environment: [String: String]) -> Result<CheckTermination, CLIError> {
        // This thread lives as long as the command: it takes the forwarded signals even when
        // `check` itself was started with them blocked.
        var forwarded = sigset_t()
        sigemptyset(&forwarded)
        sigaddset(&forwarded, SIGINT)
        sigaddset(&forwarded, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &forwarded, nil)

        let pid: pid_t
        switch spawn(arguments, environment: environment) {
        case .success(let spawned): pid = spawned
        case .failure(let error):
            forwardingTarget.store(-1, ordering: .releasing)
            return .failure(error)
        }
        forwardingTarget.store(pid, ordering: .releasing)
        let early = earlySignal.exchange(0, ordering: .acquiringAndReleasing)
        if early != 0 { kill(pid, early) }

        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                forwardingTarget.store(-1, ordering: .releasing)
                return .failure(CLIError("lost track of the command (pid \(pid)): waitpid failed: \(String(cString: strerror(errno)))"))
            }
        }
        forwardingTarget.store(-1, ordering: .releasing)
        return .success(CheckTermination(waitStatus: status))
    }

    private static func spawn(_ arguments: [String], environment: [String: String]) -> Result<pid_t, CLIError> {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        var allSignals = sigset_t()
        sigfillset(&allSignals)
        posix_spawnattr_setsigdefault(&attributes, &allSignals)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let code = posix_spawnp(&pid, arguments[0], nil, &attributes, argv, envp)
        guard code == 0 else {
            let name = arguments[0]
            let reason: String
            switch code {
            case ENOENT: reason = name.contains("/") ? "no such file" : "not found on PATH"
            case EACCES: reason = "permission denied (is it executable?)"
            default: reason = String(cString: strerror(code))
            }
            return .failure(CLIError("cannot run \(name): \(reason)"))
        }
        return .success(pid)
    }
}
