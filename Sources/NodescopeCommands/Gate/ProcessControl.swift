import Glibc

/// `prctl`, which Swift cannot call directly (it is variadic in C): looked up once and called
/// with its five integer arguments, which Linux's calling conventions pass as for a
/// non-variadic function.
enum ProcessControl {
    private typealias Prctl = @convention(c) (Int32, UInt, UInt, UInt, UInt) -> Int32

    private static let prctl: Prctl? = {
        guard let symbol = dlsym(nil, "prctl") else { return nil }
        return unsafeBitCast(symbol, to: Prctl.self)
    }()

    /// Makes this process a child subreaper (`PR_SET_CHILD_SUBREAPER`): orphans among its
    /// descendants become its children instead of init's. Returns whether it worked.
    @discardableResult
    static func becomeChildSubreaper() -> Bool {
        let setChildSubreaper: Int32 = 36
        return prctl?(setChildSubreaper, 1, 0, 0, 0) == 0
    }

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32

    /// `pipe2`, which Glibc's module does not declare (it is a GNU extension of the headers).
    private static let pipe2: Pipe2? = {
        guard let symbol = dlsym(nil, "pipe2") else { return nil }
        return unsafeBitCast(symbol, to: Pipe2.self)
    }()

    /// A pipe whose two ends close on exec from the moment they exist (`pipe2(O_CLOEXEC)`), so
    /// that no process spawned meanwhile by another thread inherits either end. Returns
    /// whether it worked; `errno` says why not.
    static func closeOnExecPipe(_ ends: inout [Int32]) -> Bool {
        guard let pipe2 else {
            errno = ENOSYS
            return false
        }
        return ends.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress, buffer.count >= 2 else { return -1 }
            return pipe2(base, O_CLOEXEC)
        } == 0
    }
}
