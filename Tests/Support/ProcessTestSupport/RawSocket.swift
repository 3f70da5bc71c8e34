import Foundation

/// A raw Unix stream socket for sending arbitrary (hostile) bytes to a collector.
public struct RawSocket {
    /// The descriptor.
    public let descriptor: Int32

    /// Connects to `path`; nil when nothing accepts there.
    public init?(path: String) {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8)
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            Glibc.close(descriptor)
            return nil
        }
        self.descriptor = descriptor
    }

    /// Sends bytes, ignoring errors (the peer may already have closed).
    public func send(_ bytes: [UInt8]) {
        // A blocking send that a signal interrupts after some bytes went returns their count:
        // send the rest.
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { return }
                offset += count
            }
        }
    }

    /// Whether the peer closes the connection within `seconds` (reading and discarding).
    public func isClosedByPeer(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 50) > 0 else { continue }
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { return true }
        }
        return false
    }

    /// Whether the peer closes the connection within `seconds`, reading nothing: a client that
    /// never reads stays one while the test waits (reading would drain what the peer holds for it).
    public func isClosedByPeerUnread(within seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        let peerClosed = Int16(0x2000)  // POLLRDHUP: the peer closed its end
        while Date() < deadline {
            var entry = pollfd(fd: descriptor, events: peerClosed, revents: 0)
            guard poll(&entry, 1, 100) > 0 else { continue }
            if entry.revents & (peerClosed | Int16(POLLHUP) | Int16(POLLERR)) != 0 { return true }
        }
        return false
    }

    /// Reads what arrives within `seconds`, until the peer closes or `count` bytes are in.
    public func read(upTo count: Int = 1 << 20, within seconds: Double) -> [UInt8] {
        let deadline = Date().addingTimeInterval(seconds)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline, received.count < count {
            var entry = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&entry, 1, 20) > 0 else { continue }
            let got = recv(descriptor, &buffer, min(buffer.count, count - received.count), 0)
            if got <= 0 { break }
            received += buffer[..<got]
        }
        return received
    }

    /// Closes the socket.
    public func close() {
        Glibc.close(descriptor)
    }
}
