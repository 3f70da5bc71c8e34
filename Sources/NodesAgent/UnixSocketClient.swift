import NodesTracking
internal import NodescopeSocket

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A non-blocking Unix stream socket to the collector, owned by the agent's writer thread.
///
/// Every send uses `MSG_NOSIGNAL`, so a collector that goes away never raises SIGPIPE in the
/// host; waits go through `poll` with a timeout, so the writer never blocks for long.
struct UnixSocketClient {
    enum Failure: Error, Equatable {
        /// The path does not fit in `sockaddr_un`.
        case pathTooLong
        /// A system call failed with `errno`.
        case system(call: String, errno: Int32)
        /// The peer closed the connection.
        case closed
        /// The socket's place or the collector's user is not to be trusted (``SocketTrust``):
        /// nothing was sent. The reason, for the log.
        case untrusted(String)
    }

    private(set) var descriptor: Int32

    /// Connects to the socket at `path` once ``SocketTrust`` has checked its directories, and
    /// checks that the collector that answered runs as this user.
    static func connect(to path: String) -> Result<UnixSocketClient, Failure> {
        switch SocketTrust.connect(to: path) {
        case .success(let descriptor): .success(UnixSocketClient(descriptor: descriptor))
        case .failure(.pathTooLong): .failure(.pathTooLong)
        case .failure(.system(let call, let error)): .failure(.system(call: call, errno: error))
        case .failure(.untrusted(let refusal)): .failure(.untrusted(refusal.message))
        }
    }

    /// Sends as much of `bytes[offset...]` as the socket takes within `timeoutMilliseconds`.
    /// Returns the new offset.
    func send(_ bytes: [UInt8], from offset: Int, timeoutMilliseconds: Int32) -> Result<Int, Failure> {
        bytes.withUnsafeBytes { send($0, from: offset, timeoutMilliseconds: timeoutMilliseconds) }
    }

    /// ``send(_:from:timeoutMilliseconds:)`` of bytes where they lie.
    func send(_ bytes: UnsafeRawBufferPointer, from offset: Int, timeoutMilliseconds: Int32) -> Result<Int, Failure> {
        var offset = offset
        // The wait is for the whole send: a socket that takes a little at a time does not get
        // the timeout again with each part.
        let deadline = MonotonicClock.now() &+ UInt64(max(timeoutMilliseconds, 0)) &* 1_000_000
        while offset < bytes.count, let base = bytes.baseAddress {
            let written = Glibc.send(descriptor, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
            if written > 0 {
                offset += written
                continue
            }
            let error = errno
            guard written < 0, error == EAGAIN || error == EWOULDBLOCK || error == EINTR else {
                return .failure(error == EPIPE || error == ECONNRESET ? .closed : .system(call: "send", errno: error))
            }
            let now = MonotonicClock.now()
            let left = now < deadline ? Int32(clamping: (deadline - now + 999_999) / 1_000_000) : 0
            switch wait(for: Int16(POLLOUT), timeoutMilliseconds: left) {
            case .success(true): continue
            case .success(false): return .success(offset)
            case .failure(let failure): return .failure(failure)
            }
        }
        return .success(offset)
    }

    /// Makes room in the socket's send buffer for `count` more bytes, when what the collector
    /// has not read yet leaves less: raises the buffer's size (the kernel allows up to
    /// `net.core.wmem_max`, and doubles what is asked). For a connection's last bytes only: a
    /// collector that is stopped or slow has let the buffer fill, and without room the goodbye
    /// that says the exit flush was cut could not be sent, and the process would read as ended
    /// abnormally. Best effort: where the calls fail, nothing changes.
    func makeRoom(for count: Int) {
        #if os(Linux)
        guard descriptor >= 0 else { return }
        var size: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &size, &length) == 0 else { return }
        // What the buffer holds (`SIOCOUTQ`, which is `TIOCOUTQ`), in the kernel's accounting
        // (its blocks' whole sizes).
        var queued: Int32 = 0
        guard ioctl(descriptor, UInt(TIOCOUTQ), &queued) == 0 else { return }
        // A block costs its bytes and about a kilobyte more: a margin for each.
        let needed = Int(queued) + count + 16_384
        guard needed > Int(size) else { return }
        var asked = Int32(clamping: needed)
        _ = setsockopt(descriptor, SOL_SOCKET, SO_SNDBUF, &asked, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    /// Reads what is available, waiting at most `timeoutMilliseconds`. Returns an empty array
    /// when nothing arrived in time, `.closed` at end of stream.
    func receive(timeoutMilliseconds: Int32) -> Result<[UInt8], Failure> {
        switch wait(for: Int16(POLLIN), timeoutMilliseconds: timeoutMilliseconds) {
        case .success(false): return .success([])
        case .failure(let failure): return .failure(failure)
        case .success(true): break
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.recv(descriptor, $0.baseAddress!, $0.count, 0) }
        if count > 0 { return .success(Array(buffer[..<count])) }
        if count == 0 { return .failure(.closed) }
        let error = errno
        if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return .success([]) }
        return .failure(error == ECONNRESET ? .closed : .system(call: "recv", errno: error))
    }

    /// Closes the socket.
    mutating func close() {
        if descriptor >= 0 { Glibc.close(descriptor) }
        descriptor = -1
    }

    /// Polls for `events`; true when ready, false on timeout.
    private func wait(for events: Int16, timeoutMilliseconds: Int32) -> Result<Bool, Failure> {
        var entry = pollfd(fd: descriptor, events: events, revents: 0)
        let ready = poll(&entry, 1, timeoutMilliseconds)
        if ready < 0 {
            return errno == EINTR ? .success(false) : .failure(.system(call: "poll", errno: errno))
        }
        if ready == 0 { return .success(false) }
        // POLLHUP with POLLIN still lets the caller read what is left before the end.
        if entry.revents & Int16(POLLERR | POLLNVAL) != 0 { return .failure(.closed) }
        if entry.revents & Int16(POLLHUP) != 0, events & Int16(POLLIN) == 0 { return .failure(.closed) }
        return .success(true)
    }
}
