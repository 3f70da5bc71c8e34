// test-listener: a minimal stand-in for the collector, for the agent's end-to-end tests.
// It listens on a Unix socket, answers every hello with helloAccepted, and appends each
// connection's raw bytes to OUTDIR/connection-N.bin. One line on stdout per connection.
// Usage: test-listener SOCKET OUTDIR [--hold-exit] [--grace-ms N]
import Glibc
import NodescopeWire

/// Writes a line to stdout at once (print is buffered when stdout is a pipe).
func emit(_ line: String) {
    var text = line + "\n"
    text.withUTF8 { _ = write(1, $0.baseAddress, $0.count) }
}

func fail(_ message: String, status: Int32) -> Never {
    var text = message + "\n"
    text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(status)
}
signal(SIGPIPE, SIG_IGN)
let arguments = CommandLine.arguments
guard arguments.count >= 3 else {
    fail("usage: test-listener SOCKET OUTDIR [--hold-exit] [--grace-ms N]", status: 2)
}
let path = arguments[1]
let outDirectory = arguments[2]
let holdExit = arguments.contains("--hold-exit")
let graceMilliseconds = arguments.firstIndex(of: "--grace-ms").flatMap { UInt64(arguments[$0 + 1]) } ?? 1_000

unlink(path)
let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
var address = sockaddr_un()
address.sun_family = sa_family_t(AF_UNIX)
withUnsafeMutableBytes(of: &address.sun_path) { raw in
    let bytes = Array(path.utf8)
    raw.copyBytes(from: bytes)
    raw[bytes.count] = 0
}
let bound = withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
}
guard bound == 0, listen(listener, 16) == 0 else {
    fail("test-listener: cannot listen on \(path): errno \(errno)", status: 1)
}
emit("listening \(path)")

struct Connection {
    var descriptor: Int32
    var number: Int
    var file: UnsafeMutablePointer<FILE>
    var decoder = FrameDecoder()
    var answered = false
}

var connections: [Connection] = []
var accepted = 0
while true {
    var polls = [pollfd(fd: listener, events: Int16(POLLIN), revents: 0)]
    polls += connections.map { pollfd(fd: $0.descriptor, events: Int16(POLLIN), revents: 0) }
    guard poll(&polls, nfds_t(polls.count), 1_000) >= 0 else { continue }
    if polls[0].revents & Int16(POLLIN) != 0 {
        let descriptor = accept(listener, nil, nil)
        if descriptor >= 0 {
            accepted += 1
            let file = fopen("\(outDirectory)/connection-\(accepted).bin", "wb")!
            connections.append(Connection(descriptor: descriptor, number: accepted, file: file))
            emit("accepted \(accepted)")
        }
    }
    var closed: [Int] = []
    for (index, poll) in polls.dropFirst().enumerated() where poll.revents != 0 {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(connections[index].descriptor, &buffer, buffer.count, 0)
        if count <= 0 {
            closed.append(index)
            continue
        }
        _ = fwrite(buffer, 1, count, connections[index].file)
        fflush(connections[index].file)
        if !connections[index].answered {
            connections[index].decoder.feed(buffer[..<count])
            if case .hello? = try? connections[index].decoder.next() {
                let reply = FrameEncoder.encoded(
                    .helloAccepted(
                        HelloAccepted(
                            graceNanos: graceMilliseconds * 1_000_000, holdExit: holdExit, collectorMonotonicNanos: 0)))
                _ = send(connections[index].descriptor, reply, reply.count, Int32(MSG_NOSIGNAL))
                connections[index].answered = true
            }
        }
    }
    for index in closed.reversed() {
        close(connections[index].descriptor)
        fclose(connections[index].file)
        emit("closed \(connections[index].number)")
        connections.remove(at: index)
    }
}
