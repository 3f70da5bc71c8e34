import Foundation
import NodescopeCollector

/// Node lifetimes over time as an SVG chart: one bar per node from its attach to its release
/// (or to the end), its detach marked, leaks red, rows grouped and sorted by tree path with the
/// path as their label, and a time axis in seconds.
///
/// Written by hand rather than through Graphviz: a chart, not a graph. Pure: ``layout(_:)``
/// places everything, ``svg(_:)`` writes it. The output is bounded whatever the recording holds:
/// at most ``Options/maxRows`` rows (then a "… N more" line), nodes that fall within a pixel of
/// each other in one row drawn as one bar, and every string from the recording escaped and cut
/// to a length.
package enum TimelineChart {
    /// What to draw.
    package struct Options: Sendable, Equatable {
        /// The caption above the chart.
        package var title: String
        /// The time of the axis's 0 (the recording's start), ns on the recorder's clock.
        package var originNanos: UInt64
        /// The first instant drawn.
        package var fromNanos: UInt64
        /// The last instant drawn (the recording's end, for the whole of it).
        package var toNanos: UInt64
        /// Rows drawn at most; the rest are counted in a last line.
        package var maxRows: Int
        /// The width of the time axis, in pixels.
        package var plotWidth: Double
        /// Rows of one path at most: nodes of a path that overlap in time each need a row, so
        /// beyond this many, the rest of the path's nodes share one last row.
        package var maxRowsPerPath: Int

        /// Options for a chart of `fromNanos` … `toNanos`, with 0 s at `originNanos`.
        package init(
            title: String, originNanos: UInt64, fromNanos: UInt64, toNanos: UInt64, maxRows: Int = 300, plotWidth: Double = 900,
            maxRowsPerPath: Int = 8
        ) {
            self.maxRowsPerPath = maxRowsPerPath
            self.title = title
            self.originNanos = originNanos
            self.fromNanos = fromNanos
            self.toNanos = toNanos
            self.maxRows = maxRows
            self.plotWidth = plotWidth
        }
    }

    /// One bar: a node's life within the window, or several nodes that fall within a pixel of
    /// each other.
    package struct Bar: Sendable, Equatable {
        /// Where the bar starts and ends, in pixels from the plot's left edge.
        package var x0: Double
        /// See ``x0``.
        package var x1: Double
        /// Where the detach is, in pixels, when it is in the window.
        package var detachX: Double?
        /// Where the leak was flagged, in pixels, when it is in the window.
        package var flagX: Double?
        /// How the node ended (for a merged bar, the most serious of its nodes).
        package var outcome: NodeLifetime.Outcome
        /// Whether the node was alive at the window's end.
        package var continues: Bool
        /// How many nodes the bar stands for.
        package var count: Int
        /// The tooltip (raw text: escaped when written).
        package var tooltip: String
    }

    /// One row: the nodes of one path that do not overlap in time.
    package struct Row: Sendable, Equatable {
        /// The label: the path, on the first row of its path only; empty on the others.
        package var label: String
        /// The whole path, for the label's tooltip.
        package var path: String
        /// Rows of one path share a band colour; this flips from one path to the next.
        package var band: Bool
        /// The bars, left to right.
        package var bars: [Bar]
    }

    /// A tick of the time axis.
    package struct Tick: Sendable, Equatable {
        /// Pixels from the plot's left edge.
        package var x: Double
        /// The label, such as `1.5 s`.
        package var label: String
    }

    /// Everything placed: what ``svg(_:)`` draws.
    package struct Layout: Sendable, Equatable {
        /// The options it was made with.
        package var options: Options
        /// The rows drawn, top to bottom.
        package var rows: [Row]
        /// The axis's ticks.
        package var ticks: [Tick]
        /// The width of the label column, in pixels.
        package var labelWidth: Double
        /// Nodes whose lives fall within the window.
        package var nodeCount: Int
        /// Rows that were not drawn (beyond ``Options/maxRows``), and the nodes on them.
        package var hiddenRows: Int
        /// See ``hiddenRows``.
        package var hiddenNodes: Int
    }

    /// Height of a row, of a bar, and the font size, in pixels.
    static let rowHeight = 18.0
    static let barHeight = 10.0
    static let fontSize = 11.0
    /// Labels longer than this lose their start ("…/FeedFlow/FeedItemFlow").
    static let labelLimit = 64
    /// Tooltips longer than this are cut.
    static let tooltipLimit = 600
    /// Margins around the plot, in pixels.
    static let margin = 16.0
    static let titleHeight = 28.0
    static let axisHeight = 26.0
    static let legendHeight = 40.0

    /// Places `lifetimes` on the chart.
    package static func layout(_ lifetimes: [NodeLifetime], options: Options) -> Layout {
        let from = options.fromNanos
        let to = max(options.toNanos, from &+ 1)
        let span = Double(to - from)
        let width = max(options.plotWidth, 100)
        func x(_ time: UInt64) -> Double { (Double(min(max(time, from), to) - from) / span * width) }

        // The lives within the window, grouped by path (component by component), each group
        // in attach order.
        let visible = lifetimes.filter { $0.attachedAt <= to && ($0.endedAt ?? .max) >= from }
        var groups: [[String]: [NodeLifetime]] = [:]
        for lifetime in visible { groups[lifetime.path, default: []].append(lifetime) }
        let paths = groups.keys.sorted { $0.lexicographicallyPrecedes($1) }

        var rows: [Row] = []
        var hiddenRows = 0
        var hiddenNodes = 0
        var band = false
        for path in paths {
            let members = groups[path, default: []].sorted { ($0.attachedAt, $0.id) < ($1.attachedAt, $1.id) }
            // Lanes: each life goes to the first row of its path that is free by its attach;
            // past the limit of rows per path, the rest share one last row (in attach order),
            // where their bars merge as they overlap.
            let regular = max(options.maxRowsPerPath, 1) - 1
            var laneEnds: [UInt64] = []
            var lanes: [[NodeLifetime]] = []
            var rest: [NodeLifetime] = []
            for lifetime in members {
                let end = lifetime.endedAt ?? to
                if let lane = laneEnds.firstIndex(where: { $0 < lifetime.attachedAt }) {
                    laneEnds[lane] = end
                    lanes[lane].append(lifetime)
                } else if lanes.count < regular {
                    laneEnds.append(end)
                    lanes.append([lifetime])
                } else {
                    rest.append(lifetime)
                }
            }
            let overflowed = rest.count > 1
            if !rest.isEmpty { lanes.append(rest) }
            let joined = path.joined(separator: "/")
            let label = elided(joined) + (members.count > 1 ? "  \u{D7}\(members.count)" : "")
            for (number, lane) in lanes.enumerated() {
                guard rows.count < options.maxRows else {
                    hiddenRows += 1
                    hiddenNodes += lane.count
                    continue
                }
                rows.append(
                    Row(
                        label: number == 0
                            ? label : (number == lanes.count - 1 && overflowed ? "\u{2026} \(lane.count) more, overlapping" : ""),
                        path: capped(joined), band: band, bars: bars(of: lane, x: x, to: to, origin: options.originNanos)))
            }
            band.toggle()
        }
        return Layout(
            options: options, rows: rows, ticks: ticks(from: from, to: to, origin: options.originNanos, width: width),
            labelWidth: labelWidth(rows), nodeCount: visible.count, hiddenRows: hiddenRows, hiddenNodes: hiddenNodes)
    }

    /// The bars of one row: one per life, except that lives within a pixel of the bar before
    /// them join it (so a row has at most about one bar per pixel).
    static func bars(of lane: [NodeLifetime], x: (UInt64) -> Double, to: UInt64, origin: UInt64) -> [Bar] {
        var bars: [Bar] = []
        for lifetime in lane {
            let end = lifetime.endedAt ?? to
            let bar = Bar(
                x0: x(lifetime.attachedAt), x1: x(end), detachX: lifetime.detachedAt.flatMap { $0 <= to ? x($0) : nil },
                flagX: lifetime.flaggedAt.flatMap { $0 <= to ? x($0) : nil }, outcome: lifetime.outcome,
                continues: lifetime.endedAt.map { $0 > to } ?? true, count: 1, tooltip: tooltip(lifetime, origin: origin))
            if var last = bars.last, bar.x0 < last.x1 + 1 {
                last.x1 = max(last.x1, bar.x1)
                last.count += 1
                if severity(bar.outcome) > severity(last.outcome) { last.outcome = bar.outcome }
                last.detachX = nil
                last.flagX = last.flagX ?? bar.flagX
                last.continues = last.continues || bar.continues
                last.tooltip = "\(last.count) nodes here, too close together to draw apart; zoom in with --start and --end"
                bars[bars.count - 1] = last
            } else {
                bars.append(bar)
            }
        }
        return bars
    }

    /// Which outcome a merged bar shows: the most serious.
    static func severity(_ outcome: NodeLifetime.Outcome) -> Int {
        switch outcome {
        case .released: 0
        case .attached: 1
        case .awaitingRelease: 2
        case .unverified: 3
        case .lateRelease: 4
        case .leaked: 5
        }
    }

    /// A life in words, for its bar's tooltip: its path and kind, then its times and outcome.
    static func tooltip(_ lifetime: NodeLifetime, origin: UInt64) -> String {
        var text = capped(lifetime.path.joined(separator: "/"))
        let kind = capped(lifetime.kind)
        if !kind.isEmpty { text += " (\(kind))" }
        var times = ["attached \(seconds(lifetime.attachedAt, from: origin))"]
        if let detached = lifetime.detachedAt { times.append("detached \(seconds(detached, from: origin))") }
        if let flagged = lifetime.flaggedAt {
            times.append("\(lifetime.outcome == .unverified ? "judged" : "flagged") \(seconds(flagged, from: origin))")
        }
        if let ended = lifetime.endedAt { times.append("released \(seconds(ended, from: origin))") }
        return text + "\n" + times.joined(separator: ", ") + "\n" + outcomeText(lifetime.outcome)
    }

    /// An outcome in words.
    static func outcomeText(_ outcome: NodeLifetime.Outcome) -> String {
        switch outcome {
        case .attached: "attached at the end"
        case .released: "released"
        case .awaitingRelease: "detached, awaiting release at the end"
        case .leaked: "LEAKED: alive after its grace"
        case .lateRelease: "released late (after being flagged)"
        case .unverified: "unverified: the process ended within the grace"
        }
    }

    /// `text` no longer than ``tooltipLimit`` characters, `…` at its end if it was.
    static func capped(_ text: String) -> String {
        text.count > tooltipLimit ? String(text.prefix(tooltipLimit)) + "\u{2026}" : text
    }

    /// `text` no longer than ``labelLimit`` characters, its start replaced by `…` if it was.
    static func elided(_ text: String) -> String {
        guard text.count > labelLimit else { return text }
        return "\u{2026}" + String(text.suffix(labelLimit - 1))
    }

    /// The label column's width, from its longest label.
    static func labelWidth(_ rows: [Row]) -> Double {
        let longest = rows.map { $0.label.count }.max() ?? 0
        return max(80, min(Double(longest), Double(labelLimit + 4)) * fontSize * 0.6 + 12)
    }

    /// Ticks at a round step (1, 2 or 5 times a power of ten seconds), about eight of them.
    static func ticks(from: UInt64, to: UInt64, origin: UInt64, width: Double) -> [Tick] {
        let start = (Double(from) - Double(origin)) / 1e9
        let end = (Double(to) - Double(origin)) / 1e9
        let span = max(end - start, 1e-9)
        let rough = span / 8
        let power = pow(10, floor(log10(rough)))
        let step = [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= rough } ?? rough
        var ticks: [Tick] = []
        var value = (start / step).rounded(.up) * step
        while value <= end + step * 1e-9, ticks.count < 50 {
            let label = format(value, step: step)
            ticks.append(Tick(x: (value - start) / span * width, label: label))
            value += step
        }
        return ticks
    }

    /// `value` seconds with as many decimals as `step` needs: `0 s`, `1.5 s`, `0.25 s`.
    static func format(_ value: Double, step: Double) -> String {
        var decimals = 0
        var scaled = step
        while decimals < 9, (scaled - scaled.rounded()).magnitude > 1e-6 {
            scaled *= 10
            decimals += 1
        }
        return fixed(value, decimals: decimals) + " s"
    }

    /// `value` with `decimals` decimals.
    static func fixed(_ value: Double, decimals: Int) -> String {
        String(format: "%.\(max(0, min(decimals, 9)))f", value)
    }

    /// A time as seconds from `origin`, to the millisecond: `1.250 s`.
    static func seconds(_ time: UInt64, from origin: UInt64) -> String {
        fixed((Double(time) - Double(origin)) / 1e9, decimals: 3) + " s"
    }
}
