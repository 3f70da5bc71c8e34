import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

@testable import NodescopeCommands

/// `nodescope tree` and `attach` with retainer paths: a few words on the node's line, and a line
/// for each path that arrives live. (Standard output is not a terminal here: no colours.)
@Suite(.offTheCooperativePool) struct TreeTextRetainersTests {
    static let path = RetainerPath(
        objectIndex: 1, verdict: .holder,
        hops: [
            .init(holderKind: .object, holder: "Session", reference: ".listeners[3]", isSuspect: true),
            .init(holderKind: .closureContext, holder: "closure context", reference: "capture"),
        ])

    static func view(retainers: [RetainerPath]?) -> TreeView {
        let root = NodeInfo(
            id: 1, parent: nil, kind: "AppFlow", name: "", status: .active, objects: [], attachedAtNanos: 0, detachedAtNanos: nil,
            depth: 0)
        let leaked = NodeInfo(
            id: 2, parent: 1, kind: "ProfileFlow", name: "", status: .leaked,
            objects: [
                ObjectInfo(index: 0, role: "flow", typeName: "ProfileFlowImp", isAlive: false),
                ObjectInfo(index: 1, role: "context", typeName: "ProfileContextImp", isAlive: true),
            ],
            attachedAtNanos: 0, detachedAtNanos: 1, depth: 1, retainers: retainers)
        return TreeView(session: SessionID(rawValue: 1), pid: 9, processName: "app", nodes: [root, leaked])
    }

    @Test func theTreeSaysWhatHoldsALeakedNode() {
        let text = TreeText.render(Self.view(retainers: [Self.path]))
        #expect(text.contains("└─ ProfileFlow ProfileFlow  ✖ LEAKED  [context]  ◀ held by Session.listeners[3]\n"), "\(text)")
        #expect(!TreeText.render(Self.view(retainers: nil)).contains("◀"))
        var second = Self.path
        second.objectIndex = 0
        second.verdict = .global
        second.hops = [.init(holderKind: .global, holder: "main.\u{1B}[2J", reference: "")]
        let both = TreeText.heldBy(Self.view(retainers: [second, Self.path]).nodes[1])
        #expect(both == "flow: retained by global `main.\\e[2J`; context: held by Session.listeners[3]")
    }

    @Test func attachPrintsAPathThatArrivesLive() {
        var view = Self.view(retainers: nil)
        view.nodes[0].name = "AppFlow"
        view.nodes[1].name = "ProfileFlow"
        var mirror = TreeMirror(view)
        let line = mirror.apply(.retainersFound(id: 2, path: Self.path, record: nil), at: Date())
        #expect(
            line?.hasSuffix(
                "  ↳ why alive  AppFlow › ProfileFlow  context ProfileContextImp: held by Session ─ .listeners[3] ─▶ closure context "
                    + "─ capture ─▶ ProfileContextImp; suspect: Session.listeners[3]") == true, "\(line ?? "nil")")
    }
}
