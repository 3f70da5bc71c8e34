import Foundation
import Glibc
import NodescopeWire

/// A minimal collector stand-in on a thread of the benchmark: accepts one host, answers its
/// hello, then reads and discards everything, or stops reading while paused (a collector
/// stopped with SIGSTOP looks the same to the host).
final class BenchListener: @unchecked Sendable {
    // `paused` and `bytes` are touched from two threads under `lock`.
    let path: String
    private let lock = NSLock()
    private var paused = false
    private var bytes = 0
    private let listener: Int32

    init(path: String) {
        self.path = path
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        _ = withUnixAddress(path) { bind(listener, $0, $1) }
        listen(listener, 4)
        Thread.detachNewThread { [self] in serve() }
    }

    var isPaused: Bool {
        get { lock.withLock { paused } }
        set { lock.withLock { paused = newValue } }
    }

    var bytesRead: Int { lock.withLock { bytes } }

    private func serve() {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        var decoder = FrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var answered = false
        while true {
            if isPaused {
                usleep(1_000)
                continue
            }
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { return }
            lock.withLock { bytes += count }
            if !answered {
                decoder.feed(buffer[..<count])
                if case .hello? = try? decoder.next() {
                    let reply = FrameEncoder.encoded(
                        .helloAccepted(
                            HelloAccepted(
                                graceNanos: 1_000_000_000, holdExit: false, collectorMonotonicNanos: 0)))
                    _ = send(connection, reply, reply.count, Int32(MSG_NOSIGNAL))
                    answered = true
                }
            }
        }
    }
}
