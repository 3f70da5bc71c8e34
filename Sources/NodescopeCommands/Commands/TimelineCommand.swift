import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeRecording
import NodescopeReplay
import NodescopeReports

/// `nodescope timeline FILE -o FILE`: node lifetimes over time, from a recording, as SVG.
struct TimelineCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "timeline",
        abstract: "Draw when each node of a recording lived: one bar per node from attach to release, as SVG.",
        discussion: """
            The recording is replayed from its start through the collector's model, as `tree \\
            --from` does. Each node is a bar from its attach to its release, or to the end when \\
            it was still alive; a tick marks its detach. The part after the detach is grey for a \\
            node released within the grace, orange while it awaits release, red for a leak \\
            (a mark where the grace ran out), purple for a late release. Rows are sorted by \\
            tree path and labelled with it; nodes of one path that do not overlap share a row. \\
            Point at a bar for its times.

            Big recordings stay drawable: at most --max-rows rows (300 by default; a last line \\
            counts the rest), and nodes closer together than a pixel in one row are drawn as one \\
            bar. --start and --end draw a part of the recording.
            """)

    @Argument(help: "The recording (see `nodescope record`).")
    var recording: String

    @Option(name: .shortAndLong, help: "The SVG file to write; - for standard output.")
    var output: String

    @Option(
        help: ArgumentHelp(
            "Draw from this instant: seconds from the start (12.5, 800ms) or a wall-clock time (ISO 8601).", valueName: "TIME"))
    var start: String?

    @Option(help: ArgumentHelp("Draw up to this instant, as --start takes it, or end.", valueName: "TIME"))
    var end: String?

    @Option(name: .customLong("max-rows"), help: "Draw at most this many rows.")
    var maxRows = 300

    @Option(help: "The width of the time axis, in pixels.")
    var width = 900

    func validate() throws {
        if let problem = OutputFile.problem(with: output) { throw ValidationError("cannot write \(output): \(problem)") }
        if maxRows < 1 { throw ValidationError("--max-rows must be 1 or more") }
        if width < 100 || width > 100_000 { throw ValidationError("--width must be between 100 and 100000") }
        if let start { _ = try Self.instant(start, option: "--start") }
        if let end { _ = try Self.instant(end, option: "--end") }
    }

    func run() throws {
        let reader = try RecordingInput.open(recording)
        let header = reader.header
        var log = LifetimeLog(startNanos: header.startMonotonicNanos)
        let replay = RecordingReplay.replay(reader, at: .end) { step in
            log.apply(step.changes, at: step.eventNanos ?? step.arrivalNanos) { step.collector.tree(step.session) }
        }
        for warning in replay.warnings { Terminal.note("\(recording): \(warning)") }
        let lastNanos = max(replay.arrivalNanos, header.startMonotonicNanos)
        let from = try start.map { try Self.nanos(Self.instant($0, option: "--start"), header: header, last: lastNanos) }
        let to = try end.map { try Self.nanos(Self.instant($0, option: "--end"), header: header, last: lastNanos) }
        let window = (from: from ?? header.startMonotonicNanos, to: to ?? lastNanos)
        if window.to <= window.from {
            throw CLIError("--end must come after --start (and the recording's start); nothing to draw", exitCode: 2)
        }
        let seconds = String(format: "%.3f", Double(lastNanos - header.startMonotonicNanos) / 1e9)
        let title = "\(header.processName) [pid \(header.pid)]: node lifetimes, \(seconds) s recorded"
        let options = TimelineChart.Options(
            title: title, originNanos: header.startMonotonicNanos, fromNanos: window.from, toNanos: window.to, maxRows: maxRows,
            plotWidth: Double(width))
        let layout = TimelineChart.layout(log.finished(), options: options)
        try OutputFile.write(TimelineChart.svg(layout), to: output)
        let nodes = layout.nodeCount == 1 ? "node" : "nodes"
        var summary = "\(layout.nodeCount) \(nodes) in \(layout.rows.count) rows"
        if layout.hiddenRows > 0 {
            summary += "; \(layout.hiddenRows) more rows (\(layout.hiddenNodes) nodes) not drawn: --max-rows draws more"
        }
        if output != "-" { Terminal.note("wrote \(output): \(summary)") }
    }

    /// `text` as an instant of the recording; `end` and seconds and wall-clock times, not
    /// `event:N` (a window is a span of time).
    static func instant(_ text: String, option: String) throws -> ReplayInstant {
        var options = ReplayOptions()
        options.at = text
        let instant: ReplayInstant
        do {
            instant = try options.instant()
        } catch {
            throw ValidationError("\(option) \(text) is not an instant; use seconds from the start (12.5), a wall-clock time, or end")
        }
        if case .event = instant {
            throw ValidationError("\(option) takes seconds from the start (12.5) or a wall-clock time, not an event number")
        }
        return instant
    }

    /// An instant on the recorder's clock, within the recording.
    static func nanos(_ instant: ReplayInstant, header: RecordingHeader, last: UInt64) throws -> UInt64 {
        let start = header.startMonotonicNanos
        switch instant {
        case .end, .event:
            return last
        case .seconds(let seconds):
            let (sum, overflow) = start.addingReportingOverflow(UInt64(max(0, min(seconds, 1e9)) * 1e9))
            return overflow ? last : min(sum, last)
        case .wall(let wall):
            guard wall >= header.startWallNanos else { return start }
            let (sum, overflow) = start.addingReportingOverflow(wall - header.startWallNanos)
            return overflow ? last : min(sum, last)
        }
    }
}
