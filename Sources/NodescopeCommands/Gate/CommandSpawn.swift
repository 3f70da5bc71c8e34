import Glibc
import NodescopeSocket

/// Starts a process with `posix_spawn`: an empty signal mask and every signal at its default
/// disposition (a parent such as a test runner may have blocked SIGTERM, or a guard ignored
/// it), the standard descriptors inherited, the program looked up on `PATH` when its name has
/// no `/`.
enum CommandSpawn {
    /// Why a process could not start: the `posix_spawn` error.
    struct Failure: Error {
        /// The error number.
        let code: Int32
    }

    /// Starts `arguments` with the environment `environment` (`KEY=VALUE` strings, as `environ`);
    /// the program is `path` when given (then `arguments[0]` is only its name).
    static func spawn(
        _ arguments: [String], path: String? = nil, environment: UnsafePointer<UnsafeMutablePointer<CChar>?>,
        actions: UnsafePointer<posix_spawn_file_actions_t>? = nil
    ) -> Result<pid_t, Failure> {
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
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let code = argv.withUnsafeBufferPointer { argvBuffer in
            posix_spawnp(&pid, path ?? arguments[0], actions, &attributes, argvBuffer.baseAddress!, environment)
        }
        return code == 0 ? .success(pid) : .failure(Failure(code: code))
    }

    /// Adds to `actions` the closing of every descriptor from `lowest` on, so the child holds
    /// none of this process's sockets; a no-op where glibc is older than 2.34.
    static func closeDescriptors(from lowest: Int32, in actions: inout posix_spawn_file_actions_t) {
        if let closeFrom { _ = closeFrom(&actions, lowest) }
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does not
    /// declare (it is behind _GNU_SOURCE); nil where it is missing.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Why `name` could not be run, in words a person can act on.
    static func describe(_ failure: Failure, running name: String) -> String {
        let reason: String
        switch failure.code {
        case ENOENT: reason = name.contains("/") ? "no such file" : "not found on PATH"
        case EACCES: reason = "permission denied (is it executable?)"
        default: reason = SystemErrorText.describe(failure.code)
        }
        return "cannot run \(name): \(reason)"
    }
}
