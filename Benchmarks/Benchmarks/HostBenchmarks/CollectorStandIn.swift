import Glibc
import NodescopeWire

/// A collector stand-in on a thread of the benchmark process: accepts one host, answers its
/// hello, then reads and discards everything (the cost of a real collector is not the host's).
final class CollectorStandIn: @unchecked Sendable {
    // Unchecked: its only state is set in `init` and then read by the serving thread alone.
    let path: String
    private let listener: Int32

    /// Listens at a fresh socket in a private directory (hosts refuse a socket in a directory
    /// that others may write).
    init() {
        var template = Array("/tmp/nodescope-hostbench-XXXXXX".utf8CString)
        let directory = mkdtemp(&template).map { String(cString: $0) } ?? "/tmp"
        path = directory + "/collector.sock"
        unlink(path)
        listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.prefix(bytes.count - 1).enumerated() { bytes[index] = byte }
        }
        _ = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        listen(listener, 4)
        var thread = pthread_t()
        let context = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                Unmanaged<CollectorStandIn>.fromOpaque(argument).takeRetainedValue().serve()
                return nil
            }, context)
    }

    private func serve() {
        let connection = accept(listener, nil, nil)
        guard connection >= 0 else { return }
        var decoder = FrameDecoder()
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var answered = false
        while true {
            let count = recv(connection, &buffer, buffer.count, 0)
            if count <= 0 { return }
            guard !answered else { continue }
            decoder.feed(buffer[..<count])
            if case .hello? = try? decoder.next() {
                let reply = FrameEncoder.encoded(
                    .helloAccepted(HelloAccepted(graceNanos: 1_000_000_000, holdExit: false, collectorMonotonicNanos: 0)))
                _ = send(connection, reply, reply.count, Int32(MSG_NOSIGNAL))
                answered = true
            }
        }
    }
}
