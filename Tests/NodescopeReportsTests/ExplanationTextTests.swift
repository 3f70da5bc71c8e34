import NodescopeCollector
import Testing

@testable import NodescopeReports

/// What `nodescope why` prints for the nodes the host explained.
@Suite struct ExplanationTextTests {
    static func node(_ id: UInt64, status: NodeStatus, retainers: [RetainerPath]?) -> NodeInfo {
        NodeInfo(
            id: id, parent: 1, kind: "Flow", name: "ProfileFlow", status: status,
            objects: [
                ObjectInfo(index: 0, role: "flow", typeName: "ProfileFlowImp", isAlive: false),
                ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true),
                ObjectInfo(index: 2, role: "worker", typeName: "SyncWorker", isAlive: true),
            ], attachedAtNanos: 1, detachedAtNanos: 2, depth: 0, retainers: retainers)
    }

    @Test func eachObjectSaysWhatHoldsItOrThatItWasReleased() {
        let text = ExplanationText.render(
            [Self.node(5, status: .detached, retainers: [RetainerReportTests.listenerPath])], paths: [["AppFlow", "ProfileFlow"]])
        #expect(
            text == """
                AppFlow › ProfileFlow  (Flow)  ⧗ detached, awaiting release
                  flow ProfileFlowImp: released
                  context ProfileContextImp
                    held by  AppFlowImp (attached node)
                             ─ .component ─▶ AppComponent
                             ─ .shared["session"] ─▶ Session
                             ─ .listeners[3] ─▶ closure context   ◀ suspect: the reference to cut
                             ─ capture ─▶ ProfileContextImp
                  worker SyncWorker: alive; the host sent no path for it

                """)
    }

    @Test func severalNodesAtOnePathAreToldApartByIdAndNamesAreEscaped() {
        var hostile = Self.node(6, status: .leaked, retainers: [])
        hostile.kind = "Flow\u{1B}[2J"
        let text = ExplanationText.render(
            [Self.node(5, status: .detached, retainers: nil), hostile], paths: [["A\u{07}", "B"], ["A\u{07}", "B"]])
        let headers = text.split(separator: "\n").filter { !$0.hasPrefix(" ") }
        #expect(headers.count == 2)
        #expect(headers[0].hasSuffix("[node 5]") && headers[1].hasSuffix("[node 6]"))
        #expect(headers[1].contains("✖ LEAKED"))
        #expect(!text.contains("\u{1B}") && !text.contains("\u{07}"), "control characters from a host are never printed raw")
    }
}
