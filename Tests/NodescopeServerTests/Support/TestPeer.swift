import NodescopeWire

#if canImport(Glibc)
import Glibc

/// A blocking peer of the collector on a Unix socket, speaking frames.
final class TestPeer: @unchecked Sendable {
    // Unchecked: used by one test at a time; the descriptor is read on the loop's thread only
    // through `recv`/`send`, which are thread-safe.
    let descriptor: Int32
    private var decoder = FrameDecoder()

    init?(path: String) {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard descriptor >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { bytes in
            for (index, byte) in path.utf8.enumerated() where index < bytes.count - 1 { bytes[index] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(descriptor)
            return nil
        }
    }

    func send(_ messages: [WireMessage]) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        _ = Glibc.send(descriptor, bytes, bytes.count, Int32(MSG_NOSIGNAL))
    }

    /// The messages that arrive until none has come for a moment, waiting at most `seconds`
    /// for the first.
    func read(within seconds: Double) -> [WireMessage] {
        var messages: [WireMessage] = []
        var wait = Int32(seconds * 1_000)
        while true {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, wait) > 0 else { return messages }
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = recv(descriptor, &buffer, buffer.count, 0)
            guard count > 0 else { return messages }
            decoder.feed(buffer[..<count])
            while let message = try? decoder.next() { messages.append(message) }
            wait = 200
        }
    }

    func close() { Glibc.close(descriptor) }
}
#endif
