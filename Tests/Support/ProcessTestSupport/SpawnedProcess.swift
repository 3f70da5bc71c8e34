import Foundation

/// A child started with `posix_spawn` and reaped with `waitpid`, in place of Foundation's
/// `Process`: on this toolchain (corelibs Foundation of Swift 6.3.1) `Process.run()` reads past
/// the end of a `dirent` while it lists `/proc/self/fd`, and crashes its caller now and then
/// (swiftlang/swift-corelibs-foundation#5472; one CI run of the whole suite in about twenty).
///
/// What the tests relied on is kept: the child has its own process group, stdin is
/// `/dev/null`, no descriptor but 0, 1 and 2 is inherited; and more is made plain: the child
/// starts with no signal blocked and every signal at its default action, as from a shell.
public final class SpawnedProcess: @unchecked Sendable {
    // Unchecked because the state below is only read and written under `lock`.
    /// How the process ended.
    public enum TerminationReason: Sendable {
        /// It called exit (or returned from main).
        case exit
        /// A signal ended it.
        case uncaughtSignal
    }

    /// Why a process could not start.
    public struct SpawnFailure: Error, CustomStringConvertible {
        /// The `posix_spawn` error number.
        public let code: Int32
        /// The program.
        public let path: String
        public var description: String { "cannot start \(path): \(String(cString: strerror(code)))" }
    }

    /// The process id; it stays the child's until ``isRunning`` is false.
    public let processIdentifier: pid_t
    private let lock = NSLock()
    private var status: (reason: TerminationReason, value: Int32)?

    /// Starts `path` with `arguments` (not counting the program) and `environment`; its stdout
    /// and stderr are `stdout` and `stderr`, descriptors the caller closes after this returns.
    public init(path: String, arguments: [String], environment: [String: String], stdout: Int32, stderr: Int32) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        if let closeFrom = SpawnedProcess.closeFrom { _ = closeFrom(&actions, 3) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setpgroup(&attributes, 0)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid: pid_t = 0
        let code = posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        guard code == 0 else { throw SpawnFailure(code: code, path: path) }
        processIdentifier = pid
    }

    /// Whether the child still runs; once it has ended it is reaped here.
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return reap(blocking: false) == nil
    }

    /// Waits until the child has ended.
    public func waitUntilExit() {
        while isRunning { usleep(5_000) }
    }

    /// The exit status, or the signal's number when a signal ended it; -1 while it still runs.
    public var terminationStatus: Int32 {
        lock.lock()
        defer { lock.unlock() }
        return reap(blocking: false)?.value ?? -1
    }

    /// Whether it exited or a signal ended it; `.exit` while it still runs.
    public var terminationReason: TerminationReason {
        lock.lock()
        defer { lock.unlock() }
        return reap(blocking: false)?.reason ?? .exit
    }

    /// The status once the child has been reaped; called under `lock`.
    private func reap(blocking: Bool) -> (reason: TerminationReason, value: Int32)? {
        if let status { return status }
        var raw: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(processIdentifier, &raw, blocking ? 0 : WNOHANG) } while result < 0 && errno == EINTR
        if result == processIdentifier {
            let signal = raw & 0x7F
            if signal == 0 {
                status = (.exit, (raw >> 8) & 0xFF)
            } else if signal != 0x7F {
                status = (.uncaughtSignal, signal)
            }
        } else if result < 0 {
            // Not our child any more (ECHILD): nothing left to wait for.
            status = (.exit, -1)
        }
        return status
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which Swift's Glibc
    /// module does not declare; nil where it is missing.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()
}

/// Reads a descriptor to its end on a thread of its own, gathering what it reads.
final class PipeReader: @unchecked Sendable {
    // Unchecked because `text` is only touched under `lock`, and `done` is a semaphore.
    private let lock = NSLock()
    private var bytes: [UInt8] = []
    private let done = DispatchSemaphore(value: 0)

    /// Starts reading `descriptor`, which it closes at its end.
    init(_ descriptor: Int32) {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    lock.lock()
                    bytes.append(contentsOf: buffer[0..<count])
                    lock.unlock()
                } else if count < 0, errno == EINTR {
                    continue
                } else {
                    break
                }
            }
            close(descriptor)
            done.signal()
        }
        thread.start()
    }

    /// What has been read so far.
    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Waits for the end of the pipe, at most `seconds` (a grandchild that kept the write end
    /// would hold it open).
    func waitForEnd(seconds: Double) {
        _ = done.wait(timeout: .now() + seconds)
    }
}
