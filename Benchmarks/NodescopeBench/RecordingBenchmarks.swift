import Foundation
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeWire

/// The flight recorder: bytes per recorded event, the daemon's ingest with and without
/// `--record-dir`, and seeking in a recording of about a million events.
func runRecordingBenchmarks(quick: Bool) async throws -> [ReportRow] {
    var rows: [ReportRow] = []
    // 9 events per node with churn: 112k nodes make about a million events.
    let nodes = quick ? 30_000 : 112_000
    let (stream, events) = HostStream.bytes(nodes: nodes, churn: true)

    // A recording as the daemon writes it: arrival times per read of the socket (64 frames a
    // read, 50 µs apart), so most frames share the arrival of their read.
    var decoder = FrameDecoder()
    decoder.feed(stream)
    var messages: [WireMessage] = []
    while let message = try decoder.next() { messages.append(message) }
    guard case .hello(let hello) = messages.first else { throw CLIFailure("the benchmark stream has no hello") }
    let start: UInt64 = 1_000_000_000
    let header = RecordingHeader(
        protocolVersion: hello.protocolVersion, pid: hello.pid, processName: hello.processName, helloMonotonicNanos: 0, helloWallNanos: 0,
        startMonotonicNanos: start, startWallNanos: 1_700_000_000_000_000_000, clockRelation: 1, graceNanos: 60_000_000_000,
        holdExit: false, startsMidSession: false)
    var writer = RecordingWriter(header: header)
    let writeStart = DispatchTime.now().uptimeNanoseconds
    for (offset, message) in messages.dropFirst().enumerated() {
        writer.append(message, arrivalNanos: start + UInt64(offset / 64) * 50_000)
    }
    writer.finish(.normal, arrivalNanos: start + UInt64(messages.count / 64 + 1) * 50_000)
    let bytes = writer.takeBytes()
    let writeSeconds = Double(DispatchTime.now().uptimeNanoseconds - writeStart) / 1e9
    rows.append(
        ReportRow(
            name: "recording size, \(events) lifecycle events (attach, 3 objects, state, detach, 3 releases per node)",
            figure: String(
                format: "%.1f bytes per event (%.1f MB; the host stream itself: %.1f bytes per event); encoded at %.1f M frames/s",
                Double(bytes.count) / Double(events), Double(bytes.count) / 1e6, Double(stream.count) / Double(events),
                Double(messages.count) / writeSeconds / 1e6),
            target: "≤ 48 bytes per event"))

    // Ingest through the socket, then the same with every stream recorded to /tmp.
    let directory = NSTemporaryDirectory() + "nodescope-bench-recordings-\(getpid())"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var plain: [Double] = []
    var recorded: [Double] = []
    var plainCPU: [Double] = []
    var recordedCPU: [Double] = []
    // Pairs of runs, without and with, in turns (which one goes first alternates), so that
    // each pair sees the same machine: the figure is the median of the pairs' ratios.
    var ratios: [Double] = []
    for pair in 0..<(quick ? 3 : 9) {
        var without = (seconds: 0.0, cpuSeconds: 0.0)
        var with = (seconds: 0.0, cpuSeconds: 0.0)
        for recordsFirst in pair.isMultiple(of: 2) ? [false, true] : [true, false] {
            if recordsFirst {
                with = try await ingestThroughSocketMeasured([stream], eventsEach: events, recordDirectory: directory)
            } else {
                without = try await ingestThroughSocketMeasured([stream], eventsEach: events)
            }
        }
        plain.append(without.seconds)
        recorded.append(with.seconds)
        plainCPU.append(without.cpuSeconds)
        recordedCPU.append(with.cpuSeconds)
        ratios.append(with.seconds / without.seconds)
        for file in (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? [] {
            try? FileManager.default.removeItem(atPath: directory + "/" + file)
        }
    }
    let pairRatios = Timing(of: ratios)
    let plainBest = plain.min() ?? 1
    let recordedBest = recorded.min() ?? 1
    rows.append(
        ReportRow(
            name: "ingest through the Unix socket, 1 host, with --record-dir vs. without (\(ratios.count) pairs of runs)",
            figure: String(
                format: "%+.1f%% time, the median of the pairs (p10 %+.1f%%, p90 %+.1f%%); best runs %.2f vs. %.2f M events/s",
                (pairRatios.median - 1) * 100, (pairRatios.p10 - 1) * 100, (pairRatios.p90 - 1) * 100,
                Double(events) / recordedBest / 1e6, Double(events) / plainBest / 1e6),
            target: "≤ 10% overhead"))
    let plainCPUBest = plainCPU.min() ?? 1
    let recordedCPUBest = recordedCPU.min() ?? 1
    rows.append(
        ReportRow(
            name: "the same, CPU time of the whole process (sender, event loop, recording writer; best of \(plainCPU.count))",
            figure: String(
                format: "%.0f vs. %.0f ns per event: %+.1f%%", recordedCPUBest / Double(events) * 1e9, plainCPUBest / Double(events) * 1e9,
                (recordedCPUBest / plainCPUBest - 1) * 100),
            target: "(the recording's own work)"))

    // Seeking: open the file from disk and replay to an instant.
    let file = directory + "/seek.nsrec"
    try Data(bytes).write(to: URL(fileURLWithPath: file))
    var seeks: [(String, Double)] = []
    let lastArrival = start + UInt64(messages.count / 64) * 50_000
    for (label, instant) in [
        ("10%", ReplayInstant.seconds(Double(lastArrival - start) / 1e9 * 0.1)),
        ("50%", .seconds(Double(lastArrival - start) / 1e9 * 0.5)), ("end", .end),
    ] {
        let seekStart = DispatchTime.now().uptimeNanoseconds
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        let reader = try RecordingReader(bytes: [UInt8](data))
        let replay = RecordingReplay.replay(reader, at: instant)
        _ = replay.collector.tree(replay.session)
        seeks.append((label, Double(DispatchTime.now().uptimeNanoseconds - seekStart) / 1e9))
    }
    rows.append(
        ReportRow(
            name: "seek in a recording of \(events) events: read the file, replay to the instant, build the tree",
            figure: seeks.map { String(format: "%@ %.2f s", $0.0, $0.1) }.joined(separator: ", "), target: "≤ 1 s"))

    // Seeking from keyframes (the web view's slider): open once, then seek anywhere.
    let residentBefore = residentBytes()
    let openStart = DispatchTime.now().uptimeNanoseconds
    let seeker = RecordingSeeker(try RecordingReader(bytes: [UInt8](try Data(contentsOf: URL(fileURLWithPath: file)))))
    let openSeconds = Double(DispatchTime.now().uptimeNanoseconds - openStart) / 1e9
    let keyframeBytes = residentBytes() - residentBefore - bytes.count
    var random = SystemRandomNumberGenerator()
    var jumps: [Double] = []
    for _ in 0..<(quick ? 10 : 40) {
        let instant = ReplayInstant.seconds(Double(UInt64.random(in: 0...(lastArrival - start), using: &random)) / 1e9)
        let seekStart = DispatchTime.now().uptimeNanoseconds
        let replay = seeker.replay(at: instant)
        _ = replay.collector.tree(replay.session)
        jumps.append(Double(DispatchTime.now().uptimeNanoseconds - seekStart) / 1e9)
    }
    jumps.sort()
    // Stepping: one record at a time from the previous seek, as the page's step and play do.
    var cursor = seeker.cursor(at: .event(seeker.reader.recordCount / 2))
    let stepStart = DispatchTime.now().uptimeNanoseconds
    for step in 1...200 {
        cursor = seeker.cursor(at: .event(seeker.reader.recordCount / 2 + UInt64(step)), continuing: cursor)
        _ = cursor.replay.collector.tree(cursor.replay.session)
    }
    let stepSeconds = Double(DispatchTime.now().uptimeNanoseconds - stepStart) / 1e9 / 200
    rows.append(
        ReportRow(
            name: "seek from keyframes in the same recording (ui --from): open once, then \(jumps.count) seeks to random instants",
            figure: String(
                format:
                    "open %.2f s (%d keyframes, every %llu records, about %.0f MB); a seek: median %.1f ms, max %.1f ms; a step of one record %.2f ms",
                openSeconds, seeker.keyframes.count, seeker.spacing, Double(max(keyframeBytes, 0)) / 1e6,
                jumps[jumps.count / 2] * 1e3, (jumps.last ?? 0) * 1e3, stepSeconds * 1e3),
            target: "≤ 1 s"))
    return rows
}
