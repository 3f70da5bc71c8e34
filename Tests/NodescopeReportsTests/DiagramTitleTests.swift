import Foundation
import NodescopeCollector
import NodescopeReports
import Testing

/// A diagram's title names the process and when its tree stood so, from the view's stamp: never
/// the time it is drawn, so two drawings of one tree are the same picture.
@Suite struct DiagramTitleTests {
    static let view = TreeView(
        session: SessionID(rawValue: 1), pid: 4121, processName: "sample-nodes",
        nodes: [
            NodeInfo(
                id: 1, parent: nil, kind: "AppFlow", name: "", status: .active, objects: [], attachedAtNanos: 0, detachedAtNanos: nil,
                depth: 0)
        ])

    @Test func theTitleStatesTheViewsStampAndNothingWithoutOne() throws {
        #expect(DiagramMapping.title(of: Self.view) == "sample-nodes [pid 4121]")
        var stamped = Self.view
        // 2026-11-27 22:00:36.9 UTC: the seconds are cut, not rounded.
        stamped.wallNanos = 1_795_816_836_900_000_000
        let title = DiagramMapping.title(of: stamped)
        let pattern = try Regex(#"^sample-nodes \[pid 4121\] at \d{4}-\d{2}-\d{2} \d{2}:\d{2}:36 [+-]\d{4}$"#)
        #expect(title.wholeMatch(of: pattern) != nil, "\(title)")
        // Drawn twice, a second apart: the same title.
        let first = DiagramMapping.diagram(for: stamped).title
        Thread.sleep(forTimeInterval: 1.05)
        #expect(DiagramMapping.diagram(for: stamped).title == first)
    }
}
