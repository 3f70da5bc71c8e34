import Foundation
import NodescopeGraphviz

/// A deterministic tree of `count` nodes shaped like an app: about four children per node,
/// zero to three parts each, every 50th node in a non-active state.
func benchmarkDiagram(nodes count: Int) -> Diagram {
    var state: UInt64 = 0x5EED
    func random() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    let titles = ["FeedFlow", "ProfileFlow", "SettingsFlow", "DetailFlow", "ChatFlow", "CardFlow", "SearchFlow"]
    let states: [DiagramNodeState] = [.inactive, .detached, .leaked, .lateRelease, .unverified]
    var nodes: [DiagramNode] = []
    nodes.reserveCapacity(count)
    for index in 0..<count {
        let parent: UInt64? = index == 0 ? nil : UInt64(index / 4 + Int(random() % 3)) % UInt64(index) + 1
        let parts = (0..<Int(random() % 4)).map { ["context: Context\($0)", "worker: SyncWorker", "view: View"][$0 % 3] }
        nodes.append(
            DiagramNode(
                id: UInt64(index + 1), parent: parent, title: titles[Int(random() % UInt64(titles.count))], kind: "Flow",
                parts: parts, state: index % 50 == 49 ? states[(index / 50) % states.count] : .active))
    }
    // Pre-order with parents first: the generator only points at earlier nodes.
    return Diagram(title: "benchmark \(count) nodes", nodes: nodes)
}

private func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// Runs `dot -Tsvg` on a DOT file as a process; nil when Graphviz's program is not installed.
private func dotProcessSeconds(_ dot: String) -> Double? {
    let candidates = ["/usr/bin/dot", "/usr/local/bin/dot"]
    guard let program = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else { return nil }
    let input = "/tmp/nodescope-bench-\(getpid()).dot"
    try? dot.write(toFile: input, atomically: true, encoding: .utf8)
    defer { unlink(input) }
    return seconds {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = ["-Tsvg", input, "-o", "/dev/null"]
        try? process.run()
        process.waitUntilExit()
    }
}

/// A tree where every node has four children until `count` nodes, filled level by level, with
/// distinct names: the wide shape of issue 21 (and of PageShapeTests).
func fourChildrenDiagram(nodes count: Int) -> Diagram {
    let nodes = (0..<count).map { index in
        var parts: [String] = []
        if index % 3 == 0 { parts.append("context: Screen\(index)Context") }
        if index % 5 == 0 { parts.append("worker: Refresh\(index)Worker") }
        return DiagramNode(
            id: UInt64(index + 1), parent: index == 0 ? nil : UInt64((index - 1) / 4 + 1), title: "Screen\(index)Flow", kind: "Flow",
            parts: parts)
    }
    return Diagram(title: "four children per node, \(count) nodes", nodes: nodes)
}

func runRenderBenchmarks(quick: Bool) throws -> [ReportRow] {
    let renderer = DiagramRenderer.shared
    var rows: [ReportRow] = []
    var options = DiagramOptions()
    options.collapseSiblingRunsLongerThan = Int.max
    _ = try renderer.render(benchmarkDiagram(nodes: 50), format: .svg, options: options)  // warm-up
    let sizes = quick ? [1_000, 10_000] : [1_000, 10_000, 100_000]
    var tidyTimes: [Int: Double] = [:]
    // Every layout that scales (and auto, which chooses among them) on both tree shapes.
    let layouts: [(name: String, layout: DiagramLayout, orientation: DiagramOrientation)] = [
        ("tidy top-down", .tidy, .topDown), ("tidy left-to-right", .tidy, .leftToRight), ("compact", .compact, .auto),
        ("auto", .auto, .auto),
    ]
    for size in sizes {
        for (shape, diagram) in [("app-shaped", benchmarkDiagram(nodes: size)), ("four children", fourChildrenDiagram(nodes: size))] {
            for entry in layouts {
                options.layout = entry.layout
                options.orientation = entry.orientation
                var drawing = DiagramRenderer.Drawing(text: "", drawnNodes: 0, hiddenNodes: 0)
                let time = try seconds { drawing = try renderer.draw(diagram, format: .svg, options: options) }
                let choice = drawing.choice.map { "\($0.layout.rawValue) \($0.orientation.rawValue)" } ?? ""
                let size2D = drawing.choice.map { String(format: "%.0f × %.0f pt", $0.width, $0.height) } ?? ""
                if shape == "app-shaped" && entry.layout == .tidy && entry.orientation == .topDown { tidyTimes[size] = time }
                rows.append(
                    ReportRow(
                        name: "\(size / 1000)k nodes, \(shape), \(entry.name)",
                        figure: String(format: "%.3f s (", time) + (entry.layout == .auto ? choice + ", " : "") + size2D
                            + String(format: ", %.1f MB of SVG)", Double(drawing.text.utf8.count) / 1e6),
                        target: size == 10_000 ? "≤ 0.5 s" : (size == 100_000 ? "≤ 6 s, near-linear" : "")))
            }
        }
        // The Swift side alone: choosing (every candidate laid out), the layout, the DOT text.
        for (shape, diagram) in [("app-shaped", benchmarkDiagram(nodes: size)), ("four children", fourChildrenDiagram(nodes: size))] {
            options.layout = .auto
            options.orientation = .auto
            let time = try seconds { _ = try renderer.draw(diagram, format: .dot, options: options) }
            let choice = try seconds { _ = try LayoutChoice.choose(for: diagram, options: options) }
            rows.append(
                ReportRow(
                    name: "\(size / 1000)k nodes, \(shape), auto to DOT (choice, layout, DOT text; no Graphviz)",
                    figure: String(format: "%.3f s, of which the choice %.3f s", time, choice), target: ""))
        }
        let diagram = benchmarkDiagram(nodes: size)
        let tidy = tidyTimes[size] ?? 1
        if size <= (quick ? 1_000 : 10_000) {
            options.layout = .dot
            options.orientation = .auto
            let dotTime = try seconds { _ = try renderer.render(diagram, format: .svg, options: options) }
            rows.append(
                ReportRow(
                    name: "\(size / 1000)k nodes to SVG, dot layout (in process)", figure: String(format: "%.3f s", dotTime),
                    target: ""))
            let dotText = try renderer.render(diagram, format: .dot, options: options)
            if let process = dotProcessSeconds(dotText) {
                rows.append(
                    ReportRow(
                        name: "\(size / 1000)k nodes, `dot -Tsvg` as a process (same DOT)",
                        figure: String(format: "%.3f s = %.1f× the tidy render", process, process / tidy), target: "the peer"))
            }
        }
    }
    if let small = tidyTimes[10_000], let large = tidyTimes[100_000] {
        rows.append(
            ReportRow(
                name: "growth from 10k to 100k nodes (tidy top-down)", figure: String(format: "%.1f× for 10× the nodes", large / small),
                target: "near-linear (≈ 10×)"))
    }
    return rows
}
