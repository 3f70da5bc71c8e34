#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The agent writer's wake-up: `signal()` from any thread; `wait` on the writer, which also
/// wakes when a socket has something to read (the collector's requests, or its end). Built on
/// a pipe, so that one `poll` waits for both: the writer sleeps without a timer when idle.
final class WakeSignal: @unchecked Sendable {
    // Unchecked because it holds file descriptors: they are set once, and reads and writes of
    // a pipe are safe from any thread.
    private let readEnd: Int32
    private let writeEnd: Int32

    init() {
        var ends: [Int32] = [-1, -1]
        if pipe(&ends) == 0 {
            for end in ends {
                _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
                _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            }
        } else {
            ends = [-1, -1]
        }
        readEnd = ends[0]
        writeEnd = ends[1]
    }

    deinit {
        if readEnd >= 0 { close(readEnd) }
        if writeEnd >= 0 { close(writeEnd) }
    }

    /// Wakes the waiter, or makes its next wait return at once. (A full pipe already does.)
    func signal() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Waits until signalled, until `socket` (if any) is readable or closed, or until
    /// `nanoseconds` pass (forever when nil). Returns whether it was signalled, and clears the
    /// signal.
    @discardableResult
    func wait(nanoseconds: UInt64?, orReadable socket: Int32? = nil) -> Bool {
        var entries = [pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)]
        if let socket, socket >= 0 { entries.append(pollfd(fd: socket, events: Int16(POLLIN), revents: 0)) }
        // Rounded up: a wait never ends before its time.
        let timeout = nanoseconds.map { Int32(clamping: ($0 &+ 999_999) / 1_000_000) } ?? -1
        let ready = entries.withUnsafeMutableBufferPointer { buffer in
            poll(buffer.baseAddress, nfds_t(buffer.count), timeout)
        }
        guard ready > 0, entries[0].revents != 0 else { return false }
        var sink = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &sink, sink.count) > 0 {}
        return true
    }
}
