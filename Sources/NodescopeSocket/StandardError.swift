#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes diagnostics to standard error without Foundation, and without ever raising SIGPIPE in
/// the host: standard error may be a pipe whose reader is gone.
public enum StandardError {
    /// Writes `text` as is; gives up quietly when standard error cannot take it.
    public static func write(_ text: String) {
        // SIGPIPE would kill the host by default. Block it on this thread for the write, and
        // consume one raised by it before unblocking.
        var pipeOnly = sigset_t()
        sigemptyset(&pipeOnly)
        sigaddset(&pipeOnly, SIGPIPE)
        var previous = sigset_t()
        pthread_sigmask(SIG_BLOCK, &pipeOnly, &previous)
        var broken = false
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(2, base + offset, bytes.count - offset)
                if written > 0 {
                    offset += written
                } else if written < 0, errno == EINTR {
                    continue
                } else {
                    broken = written < 0 && errno == EPIPE
                    return
                }
            }
        }
        if broken, sigismember(&previous, SIGPIPE) == 0 {
            var none = timespec(tv_sec: 0, tv_nsec: 0)
            _ = sigtimedwait(&pipeOnly, nil, &none)
        }
        pthread_sigmask(SIG_SETMASK, &previous, nil)
    }
}
