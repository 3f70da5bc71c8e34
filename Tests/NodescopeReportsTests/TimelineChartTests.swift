import Foundation
import NodescopeCollector
import Testing

@testable import NodescopeReports

#if canImport(FoundationXML)
import FoundationXML
#endif

@Suite("Timeline: lifetimes from a replay's changes, and their chart")
struct TimelineChartTests {
    static let second: UInt64 = 1_000_000_000

    static func info(
        _ id: UInt64, _ parent: UInt64?, _ name: String, at time: UInt64, objects: Int = 1, placeholder: Bool = false
    ) -> NodeInfo {
        NodeInfo(
            id: id, parent: parent, kind: placeholder ? "" : "Flow", name: placeholder ? "" : name,
            status: placeholder ? .detached : .active,
            objects: (0..<objects).map { ObjectInfo(index: UInt16($0), role: "flow", typeName: "T", isAlive: true) },
            attachedAtNanos: time, detachedAtNanos: nil, depth: 0, isPlaceholder: placeholder)
    }

    static func record(_ id: UInt64, detachedAt: UInt64, flaggedAt: UInt64, verdict: LeakRecord.Verdict = .leaked) -> LeakRecord {
        LeakRecord(
            session: SessionID(rawValue: 1), pid: 1, processName: "p", nodeID: id, kind: "Flow", path: ["App", "Leaky"],
            aliveObjects: [], detachedAtNanos: detachedAt, flaggedAtNanos: flaggedAt, releasedAtNanos: nil, verdict: verdict,
            fingerprint: "f")
    }

    // MARK: - LifetimeLog

    @Test func takingTheEndedLivesLeavesOnlyTheLiveOnesHeld() {
        let s = Self.second
        var log = LifetimeLog(startNanos: 0)
        log.apply([.attached(Self.info(1, nil, "App", at: 0))], at: 0, tree: { nil })
        log.apply([.attached(Self.info(2, 1, "Clean", at: s))], at: s, tree: { nil })
        log.apply([.attached(Self.info(3, 1, "Leaky", at: s))], at: s, tree: { nil })
        log.apply([.statusChanged(id: 2, status: .detached), .objectReleased(id: 2, index: 0), .removed(id: 2)], at: 2 * s, tree: { nil })
        log.apply([.statusChanged(id: 3, status: .detached)], at: 2 * s, tree: { nil })
        #expect(log.takeEnded(flaggedBy: 10 * s).map(\.id) == [2])
        #expect(log.takeEnded(flaggedBy: 10 * s).isEmpty && log.count == 2)
        log.apply([.leakFlagged(Self.record(3, detachedAt: 2 * s, flaggedAt: 3 * s))], at: 3 * s, tree: { nil })
        // A leak is taken once flagged long enough ago, and what follows it is forgotten.
        #expect(log.takeEnded(flaggedBy: 3 * s - 1).isEmpty)
        let leaked = log.takeEnded(flaggedBy: 3 * s)
        #expect(leaked.map(\.id) == [3] && leaked.first?.outcome == .leaked && leaked.first?.endedAt == nil)
        log.apply([.objectReleased(id: 3, index: 0), .removed(id: 3)], at: 4 * s, tree: { nil })
        #expect(log.takeEnded(flaggedBy: 10 * s).isEmpty)
        #expect(log.finished().map(\.id) == [1])
        // A child attached under a node still held has its path.
        log.apply([.attached(Self.info(4, 1, "Next", at: 5 * s))], at: 5 * s, tree: { nil })
        #expect(log.finished().last?.path == ["App", "Next"])
    }

    @Test func pastItsLimitTheLogCountsTheNodesItLeavesOut() {
        var log = LifetimeLog(startNanos: 0, limit: 2)
        for id in UInt64(1)...5 { log.apply([.attached(Self.info(id, nil, "N\(id)", at: id))], at: id, tree: { nil }) }
        log.apply([.removed(id: 4)], at: 9, tree: { nil })
        #expect(log.finished().map(\.id) == [1, 2])
        #expect(log.count == 2 && log.untracked == 3)
    }

    @Test func attachDetachReleaseAndALeakBecomeLifetimes() {
        let s = Self.second
        var log = LifetimeLog(startNanos: 0)
        log.apply([.attached(Self.info(1, nil, "App", at: 0))], at: 0, tree: { nil })
        log.apply([.attached(Self.info(2, 1, "Clean", at: s))], at: s, tree: { nil })
        log.apply([.attached(Self.info(3, 1, "Leaky", at: s, objects: 2))], at: s, tree: { nil })
        log.apply([.statusChanged(id: 2, status: .detached)], at: 2 * s, tree: { nil })
        log.apply([.objectReleased(id: 2, index: 0), .removed(id: 2)], at: 2 * s + 10, tree: { nil })
        log.apply([.statusChanged(id: 3, status: .detached)], at: 3 * s, tree: { nil })
        log.apply([.objectReleased(id: 3, index: 0)], at: 3 * s + 5, tree: { nil })
        log.apply(
            [.statusChanged(id: 3, status: .leaked), .leakFlagged(Self.record(3, detachedAt: 3 * s, flaggedAt: 4 * s))], at: 4 * s,
            tree: { nil })
        let lives = Dictionary(uniqueKeysWithValues: log.finished().map { ($0.id, $0) })
        #expect(lives[1]?.outcome == .attached)
        #expect(lives[1]?.endedAt == nil)
        var clean = NodeLifetime(
            id: 2, path: ["App", "Clean"], kind: "Flow", attachedAt: s, detachedAt: 2 * s, endedAt: 2 * s + 10, outcome: .released)
        clean.parent = 1
        #expect(lives[2] == clean)
        #expect(lives[1]?.parent == nil)
        #expect(lives[3]?.outcome == .leaked)
        #expect(lives[3]?.detachedAt == 3 * s)
        #expect(lives[3]?.flaggedAt == 4 * s)
        #expect(lives[3]?.endedAt == nil)
        #expect(lives[3]?.path == ["App", "Leaky"])
    }

    @Test func aNodeReleasedWhileALeakRemainsBelowItEndsAtItsLastRelease() {
        // The collector keeps such a node as a placeholder and says nothing but the release.
        var log = LifetimeLog(startNanos: 0)
        log.apply([.attached(Self.info(1, nil, "App", at: 0)), .attached(Self.info(2, 1, "Child", at: 0))], at: 0, tree: { nil })
        log.apply([.statusChanged(id: 1, status: .detached)], at: 5, tree: { nil })
        log.apply([.objectReleased(id: 1, index: 0)], at: 7, tree: { nil })
        let app = log.finished().first { $0.id == 1 }
        #expect(app?.outcome == .released)
        #expect(app?.endedAt == 7)
    }

    @Test func aLeakReleasedLaterIsALateReleaseAndADetachedNodeAtTheEndAwaitsRelease() {
        var log = LifetimeLog(startNanos: 0)
        log.apply([.attached(Self.info(1, nil, "A", at: 0)), .attached(Self.info(2, nil, "B", at: 0))], at: 0, tree: { nil })
        log.apply([.statusChanged(id: 1, status: .detached), .statusChanged(id: 2, status: .detached)], at: 10, tree: { nil })
        log.apply(
            [.statusChanged(id: 1, status: .leaked), .leakFlagged(Self.record(1, detachedAt: 10, flaggedAt: 20))], at: 20, tree: { nil })
        log.apply([.objectReleased(id: 1, index: 0), .statusChanged(id: 1, status: .lateRelease)], at: 30, tree: { nil })
        let lives = Dictionary(uniqueKeysWithValues: log.finished().map { ($0.id, $0) })
        #expect(lives[1]?.outcome == .lateRelease)
        #expect(lives[1]?.endedAt == 30)
        #expect(lives[2]?.outcome == .awaitingRelease)
    }

    @Test func aSnapshotOpensTheNodesItHoldsAndEndsThoseItDropped() {
        var log = LifetimeLog(startNanos: 100)
        log.apply([.attached(Self.info(1, nil, "App", at: 100)), .attached(Self.info(2, 1, "Gone", at: 100))], at: 100, tree: { nil })
        // Before the recording started: the bar starts at its start.
        let view = TreeView(
            session: SessionID(rawValue: 1), pid: 1, processName: "p",
            nodes: [Self.info(1, nil, "App", at: 100), Self.info(9, nil, "?", at: 0, placeholder: true), Self.info(3, 9, "New", at: 50)])
        log.apply([.resynced], at: 200, tree: { view })
        let lives = Dictionary(uniqueKeysWithValues: log.finished().map { ($0.id, $0) })
        #expect(lives[2]?.outcome == .released)
        #expect(lives[2]?.endedAt == 200)
        #expect(lives[3]?.attachedAt == 100)
        #expect(lives[3]?.path == ["?", "New"])
        #expect(lives[1]?.endedAt == nil)
        #expect(lives[9] == nil)
    }

    // MARK: - Layout

    static func options(rows: Int = 300, perPath: Int = 8, to: UInt64 = 10 * second) -> TimelineChart.Options {
        TimelineChart.Options(
            title: "t", originNanos: 0, fromNanos: 0, toNanos: to, maxRows: rows, plotWidth: 1000, maxRowsPerPath: perPath)
    }

    @Test func rowsAreSortedByPathAndNodesOfAPathThatDoNotOverlapShareARow() {
        let s = Self.second
        let lives = [
            NodeLifetime(id: 1, path: ["App"], kind: "Flow", attachedAt: 0, outcome: .attached),
            NodeLifetime(id: 2, path: ["App", "Item"], kind: "Flow", attachedAt: s, detachedAt: 2 * s, endedAt: 2 * s, outcome: .released),
            NodeLifetime(
                id: 3, path: ["App", "Item"], kind: "Flow", attachedAt: 3 * s, detachedAt: 4 * s, endedAt: 4 * s, outcome: .released),
            NodeLifetime(id: 4, path: ["App", "Item"], kind: "Flow", attachedAt: 3 * s + 1, outcome: .attached),
            NodeLifetime(id: 5, path: ["App", "A"], kind: "Flow", attachedAt: 5 * s, detachedAt: 6 * s, outcome: .leaked),
        ]
        let layout = TimelineChart.layout(lives, options: Self.options())
        #expect(layout.rows.map(\.label) == ["App", "App/A", "App/Item  \u{D7}3", ""])
        #expect(layout.rows[2].bars.count == 2)
        #expect(layout.rows[3].bars.count == 1)
        #expect(layout.rows[2].bars[0].x0 == 100)
        #expect(layout.rows[2].bars[0].x1 == 200)
        #expect(layout.rows[1].bars[0].detachX == 600)
        #expect(layout.rows[1].bars[0].continues)
        #expect(!layout.rows[2].bars[0].continues)
        #expect(layout.rows.map(\.band) == [false, true, false, false])
        #expect(layout.nodeCount == 5)
    }

    @Test func rowsBeyondTheLimitAreCountedAndOverlappingNodesOfAPathShareALastRow() {
        let many = (0..<50).map {
            NodeLifetime(id: UInt64($0), path: ["App", "Item"], kind: "Flow", attachedAt: UInt64($0), outcome: .attached)
        }
        let others = (0..<20).map { NodeLifetime(id: UInt64(100 + $0), path: ["B\($0)"], kind: "Flow", attachedAt: 0, outcome: .attached) }
        let layout = TimelineChart.layout(many + others, options: Self.options(rows: 10, perPath: 4))
        // App/Item: three rows of one node, then one row of the other 47; then B0 … B5.
        #expect(layout.rows.count == 10)
        #expect(layout.rows[3].label == "\u{2026} 47 more, overlapping")
        #expect(layout.rows[3].bars.count == 1)
        #expect(layout.rows[3].bars[0].count == 47)
        #expect(layout.hiddenRows == 14)
        #expect(layout.hiddenNodes == 14)
        let svg = TimelineChart.svg(layout)
        #expect(svg.contains("14 more rows (14 nodes) not drawn"))
    }

    @Test func livesWithinAPixelOfEachOtherAreOneBarAndTheWorstOutcomeShows() {
        // 10,000 lives of 1 µs each, one after another, in 10 s over 1000 pixels.
        var lives: [NodeLifetime] = []
        for index in 0..<10_000 {
            let start = UInt64(index) * 2_000
            lives.append(
                NodeLifetime(
                    id: UInt64(index), path: ["App", "Cell"], kind: "Flow", attachedAt: start, detachedAt: start + 500,
                    endedAt: start + 1_000,
                    outcome: index == 5_000 ? .leaked : .released))
        }
        let layout = TimelineChart.layout(lives, options: Self.options())
        #expect(layout.rows.count == 1)
        #expect(layout.rows[0].bars.count == 1)
        #expect(layout.rows[0].bars[0].count == 10_000)
        #expect(layout.rows[0].bars[0].outcome == .leaked)
    }

    @Test func aWindowKeepsOnlyTheLivesWithinItAndClipsThem() {
        let s = Self.second
        let lives = [
            NodeLifetime(id: 1, path: ["Early"], kind: "", attachedAt: 0, detachedAt: s, endedAt: s, outcome: .released),
            NodeLifetime(id: 2, path: ["Across"], kind: "", attachedAt: s, outcome: .attached),
        ]
        var options = Self.options()
        options.fromNanos = 2 * s
        options.toNanos = 4 * s
        let layout = TimelineChart.layout(lives, options: options)
        #expect(layout.rows.map(\.label) == ["Across"])
        #expect(layout.rows[0].bars[0].x0 == 0)
        #expect(layout.rows[0].bars[0].x1 == 1000)
        #expect(layout.ticks.first?.label == "2.0 s")
        #expect(layout.ticks.last?.label == "4.0 s")
    }

    @Test func ticksFallOnRoundSteps() {
        let ticks = TimelineChart.ticks(from: 0, to: 1_934_000_000, origin: 0, width: 900)
        #expect(ticks.map(\.label) == ["0.0 s", "0.5 s", "1.0 s", "1.5 s"])
        let fine = TimelineChart.ticks(from: 0, to: 30_000_000, origin: 0, width: 900)
        #expect(fine.first?.label == "0.000 s")
        #expect(fine.count >= 5 && fine.count <= 11)
    }

    @Test func everyStringFromTheRecordingIsEscapedAndTheSVGParses() throws {
        let hostile = "</text><script>alert(1)</script>&\u{1B}[31m\u{0}\"'\u{FFFE}\u{202E}"
        let lives = [
            NodeLifetime(id: 1, path: [hostile, String(repeating: "W", count: 100_000)], kind: hostile, attachedAt: 0, outcome: .leaked)
        ]
        var options = Self.options()
        options.title = hostile
        let svg = TimelineChart.svg(TimelineChart.layout(lives, options: options))
        #expect(!svg.contains("<script>"))
        #expect(svg.utf8.count < 10_000)
        #if canImport(FoundationXML) || canImport(Darwin)
        let parser = XMLParser(data: Data(svg.utf8))
        #expect(parser.parse(), "\(parser.parserError.map { "\($0)" } ?? "")")
        #endif
        let empty = TimelineChart.svg(TimelineChart.layout([], options: Self.options()))
        #expect(empty.contains("no node lived"))
    }
}
