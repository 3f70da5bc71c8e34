import Foundation
import Logging
import NodescopeCollector
import NodescopeServer
import NodescopeWire

/// The collector's logger in benchmarks: warnings only, so the tables stay readable.
let quietLogger: Logger = {
    var logger = Logger(label: "bench")
    logger.logLevel = .warning
    return logger
}()

/// Resident memory of this process in bytes (from /proc/self/statm).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    return fields.count > 1 ? (Int(fields[1]) ?? 0) * Int(sysconf(Int32(_SC_PAGESIZE))) : 0
}

/// Decodes and ingests a whole stream in this thread: the collector's own cost, no socket.
private func ingestInProcess(_ stream: [UInt8]) -> (seconds: Double, collector: Collector) {
    var collector = Collector(settings: CollectorSettings(graceNanos: 60_000_000_000))
    var decoder = FrameDecoder()
    let start = DispatchTime.now().uptimeNanoseconds
    var session: SessionID?
    var changes: [TreeChange] = []
    // Fed in 64 KiB reads, as the server receives them.
    var offset = 0
    stream.withUnsafeBytes { raw in
        while offset < raw.count {
            let end = min(offset + 65_536, raw.count)
            decoder.feed(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
            offset = end
            do {
                while let message = try decoder.next() {
                    if case .hello(let hello) = message {
                        session = collector.openSession(hello, now: 1)
                    } else if let session {
                        changes.removeAll(keepingCapacity: true)
                        try collector.ingest(message, session: session, now: 1, into: &changes)
                    }
                }
            } catch {
                fatalError("the benchmark stream is invalid: \(error)")
            }
        }
    }
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, collector)
}

/// Sends `streams` concurrently, one connection each, to a real collector; returns the time
/// until it has ingested every event.
func ingestThroughSocket(_ streams: [[UInt8]], eventsEach: Int, recordDirectory: String? = nil) async throws -> Double {
    try await ingestThroughSocketMeasured(streams, eventsEach: eventsEach, recordDirectory: recordDirectory).seconds
}

/// The process's CPU time so far (all threads, user and system), in seconds.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

/// Ingest through the socket: the wall-clock seconds until every event is in the collector,
/// and the process's CPU seconds until the server has stopped (a recording's writer included;
/// the sending threads' work is the same with and without it).
/// With `observers`, the server hands them its leak records and changes, as the daemon's OTLP
/// export does.
func ingestThroughSocketMeasured(
    _ streams: [[UInt8]], eventsEach: Int, recordDirectory: String? = nil,
    observers: (leaks: @Sendable ([LeakRecord]) -> Void, changes: ChangeObserver)? = nil
) async throws -> (seconds: Double, cpuSeconds: Double) {
    let cpuStart = processCPUSeconds()
    let directory = benchSocketDirectory()
    defer { rmdir(directory) }
    let path = directory + "/c.sock"
    defer { unlink(path) }
    let server = CollectorServer(
        socketPath: path, settings: CollectorSettings(graceNanos: 60_000_000_000), logger: quietLogger,
        recordDirectory: recordDirectory, leakObserver: observers?.leaks, changeObserver: observers?.changes)
    try await server.start()
    let expected = UInt64(eventsEach)
    let start = DispatchTime.now().uptimeNanoseconds
    for stream in streams {
        Thread.detachNewThread {
            let socket = rawConnect(path)
            var offset = 0
            stream.withUnsafeBytes { raw in
                while offset < raw.count {
                    let sent = send(socket, raw.baseAddress! + offset, min(1 << 20, raw.count - offset), Int32(MSG_NOSIGNAL))
                    if sent <= 0 { break }
                    offset += sent
                }
            }
            var buffer = [UInt8](repeating: 0, count: 256)
            _ = recv(socket, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            Thread.sleep(forTimeInterval: 30)  // stays connected until the measurement is over
            close(socket)
        }
    }
    let giveUp = DispatchTime.now().uptimeNanoseconds + 120_000_000_000
    while true {
        let processes = try await server.withCollector { $0.processes() }
        if processes.count == streams.count, processes.allSatisfy({ $0.eventsIngested >= expected }) { break }
        guard DispatchTime.now().uptimeNanoseconds < giveUp else {
            await server.stop()
            throw CLIFailure(
                "the collector ingested \(processes.map(\.eventsIngested)) of \(expected) events from \(streams.count) hosts in 120 s")
        }
        try await Task.sleep(for: .milliseconds(1))
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    await server.stop()
    return (seconds, processCPUSeconds() - cpuStart)
}

/// The ceiling: the same bytes through a Unix socket pair to a reader that only discards them.
private func rawSocketSeconds(_ stream: [UInt8]) -> Double {
    var pair: [Int32] = [0, 0]
    socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
    let reader = pair[1]
    let done = DispatchSemaphore(value: 0)
    let total = stream.count
    Thread.detachNewThread {
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var received = 0
        while received < total {
            let count = recv(reader, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += count
        }
        done.signal()
    }
    let start = DispatchTime.now().uptimeNanoseconds
    stream.withUnsafeBytes { raw in
        var offset = 0
        while offset < raw.count {
            let sent = send(pair[0], raw.baseAddress! + offset, min(1 << 20, raw.count - offset), Int32(MSG_NOSIGNAL))
            if sent <= 0 { break }
            offset += sent
        }
    }
    if done.wait(timeout: .now() + 120) == .timedOut { Bounded.fail("the raw socket's reader did not get the stream in 120 s") }
    close(pair[0])
    close(pair[1])
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func rawConnect(_ path: String) -> Int32 {
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    _ = withUnixAddress(path) { connect(descriptor, $0, $1) }
    return descriptor
}

/// Calls `body` with the address of the Unix socket at `path` (short benchmark paths only).
func withUnixAddress<T>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> T) -> T {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        let bytes = Array(path.utf8.prefix(raw.count - 1))
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

func runCollectorBenchmarks(quick: Bool) async throws -> [ReportRow] {
    var rows: [ReportRow] = []
    let nodes = quick ? 100_000 : 400_000
    let (churn, churnEvents) = HostStream.bytes(nodes: nodes, churn: true)

    let (inProcess, checked) = ingestInProcess(churn)
    let ingested = checked.processes().first?.eventsIngested ?? 0
    guard ingested >= UInt64(churnEvents) else {
        throw CLIFailure("the collector ingested \(ingested) of \(churnEvents) events")
    }
    rows.append(
        ReportRow(
            name: "decode + ingest, in process, 1 host (\(churnEvents) events)",
            figure: String(format: "%.2f M events/s", Double(churnEvents) / inProcess / 1e6), target: "≥ 1 M events/s"))

    let ceiling = rawSocketSeconds(churn)
    let oneHost = try await ingestThroughSocket([churn], eventsEach: churnEvents)
    rows.append(
        ReportRow(
            name: "ingest through the Unix socket, 1 host",
            figure: String(
                format: "%.2f M events/s (raw socket ceiling for the same bytes: %.1f M events/s, %.0f MB/s)",
                Double(churnEvents) / oneHost / 1e6, Double(churnEvents) / ceiling / 1e6,
                Double(churn.count) / ceiling / 1e6),
            target: "≥ 1 M events/s"))

    let eightStreams = (1...8).map { HostStream.bytes(nodes: nodes / 8, churn: true, pid: UInt32($0)) }
    let eight = try await ingestThroughSocket(eightStreams.map(\.bytes), eventsEach: eightStreams[0].events)
    let eightEvents = eightStreams.map(\.events).reduce(0, +)
    rows.append(
        ReportRow(
            name: "ingest through the Unix socket, 8 hosts at once",
            figure: String(format: "%.2f M events/s in total", Double(eightEvents) / eight / 1e6), target: "≥ 1 M events/s"))

    for count in quick ? [100_000] : [100_000, 1_000_000] {
        // A fresh process each time, so that memory freed by earlier runs does not hide growth.
        let process = Process()
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["memory-probe", "\(count)"]
        process.standardOutput = pipe
        try process.run()
        process.waitUntilExit()
        let figure = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        rows.append(
            ReportRow(
                name: "collector memory, \(count / 1000)k live nodes (3 objects each)",
                figure: "\(figure) bytes per node (resident growth, fresh process)", target: "≤ 512 bytes per live node at 1 M"))
    }
    return rows
}

/// Prints the resident growth per node of a collector holding `count` live nodes. The stream is
/// encoded first, so only the collector's own memory is measured.
func memoryProbe(count: Int) {
    let (stream, _) = HostStream.bytes(nodes: count, churn: false)
    let before = residentBytes()
    let (_, collector) = ingestInProcess(stream)
    let after = residentBytes()
    let live = collector.processes().first?.liveNodes ?? 0
    // Both must outlive the second reading: Swift may free a value right after its last use.
    withExtendedLifetime(collector) {}
    withExtendedLifetime(stream) {}
    guard live >= count else {
        print("error: only \(live) of \(count) nodes are live")
        return
    }
    if CommandLine.arguments.contains("--verbose") {
        print("stream \(stream.count >> 20) MiB, resident before \(before >> 20) MiB, after \(after >> 20) MiB")
    }
    print((after - before) / count)
}

/// How long after the grace a leak is flagged by a real collector (its timer, not a poll).
func runLeakLatencyBenchmark(quick: Bool) async throws -> [ReportRow] {
    let directory = benchSocketDirectory()
    defer { rmdir(directory) }
    let path = directory + "/l.sock"
    let grace: UInt64 = 200_000_000
    let server = CollectorServer(socketPath: path, settings: CollectorSettings(graceNanos: grace), logger: quietLogger)
    try await server.start()
    defer { unlink(path) }
    var latencies: [Double] = []
    var decisions: [Double] = []
    for round in 0..<(quick ? 5 : 20) {
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        let now = DispatchTime.now().uptimeNanoseconds
        encoder.encode(
            .hello(Hello(role: .host, pid: UInt32(1000 + round), monotonicNanos: now, wallNanos: 0, processName: "latency")), into: &bytes)
        encoder.encode(.defineString(DefineStringFrame(stringID: 1, value: "Flow")), into: &bytes)
        encoder.encode(.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), into: &bytes)
        encoder.encode(.snapshotEnd(sequence: 0), into: &bytes)
        encoder.encode(
            .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: now, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 1)),
            into: &bytes)
        encoder.encode(
            .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: now, nodeID: 1, objectIndex: 0, roleStringID: 1, typeNameStringID: 1)),
            into: &bytes)
        let detachedAt = DispatchTime.now().uptimeNanoseconds
        encoder.encode(.nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: detachedAt, nodeID: 1)), into: &bytes)
        let socket = rawConnect(path)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        let pid = UInt32(1000 + round)
        // Verdicts follow the host's watermark: like a real host with a grace pending, this
        // one sends a heartbeat every 20 ms (the agent's pace is 100 ms at most), so the leak
        // is flagged when the first heartbeat past the grace arrives. Bounded: 10 s a round.
        var lastHeartbeat = detachedAt
        // The first heartbeat past the grace: the one that lets the collector decide.
        var deciding: UInt64?
        let giveUp = detachedAt + 10_000_000_000
        while true {
            let flagged = try await server.withCollector { collector in
                collector.leaks(nil).contains { $0.pid == pid && $0.verdict == .leaked }
            }
            if flagged { break }
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < giveUp else {
                close(socket)
                await server.stop()
                throw CLIFailure("the leak of round \(round) was not flagged within 10 s of its detach")
            }
            if now - lastHeartbeat >= 20_000_000 {
                var beat: [UInt8] = []
                encoder.encode(.heartbeat(monotonicNanos: now), into: &beat)
                _ = beat.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                lastHeartbeat = now
                if deciding == nil, now >= detachedAt + grace { deciding = now }
            }
            try await Task.sleep(for: .microseconds(200))
        }
        let seen = DispatchTime.now().uptimeNanoseconds
        latencies.append(Double(seen - detachedAt - grace) / 1e6)
        if let deciding { decisions.append(Double(seen - deciding) / 1e6) }
        close(socket)
    }
    await server.stop()
    latencies.sort()
    decisions.sort()
    guard !decisions.isEmpty else { throw CLIFailure("no leak was flagged after a heartbeat past its grace") }
    return [
        ReportRow(
            name: "leak flagged after the heartbeat that passes its grace (\(decisions.count) leaks)",
            figure: String(
                format: "%.2f ms median, %.2f ms max (observed by 0.2 ms polling)", decisions[decisions.count / 2],
                decisions.last ?? 0),
            target: "a verdict as the watermark passes"),
        ReportRow(
            name: "leak flagged after the grace (200 ms grace, \(latencies.count) leaks)",
            figure: String(
                format: "%.2f ms median, %.2f ms max after detach + grace (heartbeats every 20 ms)",
                latencies[latencies.count / 2], latencies.last ?? 0),
            target: "within grace + 100 ms"),
    ]
}

/// A benchmark that cannot produce a meaningful figure.
struct CLIFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
