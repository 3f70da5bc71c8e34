import NodescopeCollector
import NodescopeReports
import Testing

/// A stored closure in the words of the reports: by its name and line where the tools named it,
/// by today's words where they could not.
@Suite struct ClosureTextTests {
    typealias Hop = RetainerPath.Hop

    static func path(named: Bool) -> RetainerPath {
        let closure = RetainerPath.Closure(
            image: "/app/.build/debug/app", fileOffset: 0x4_2000,
            symbol: named ? "closure #1 in SettingsContextImp.didBecomeActive()" : nil,
            file: named ? "/app/Sources/App/SettingsNode.swift" : nil, line: named ? 20 : nil)
        return RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                Hop(holderKind: .object, holder: "Notifications", reference: ".observers[0]", isSuspect: true),
                Hop(holderKind: .closureContext, holder: "closure context", reference: "capture", closure: closure),
            ])
    }

    @Test func aNamedClosureReadsAsItsSourceAndTheSuspectSaysWhereItIsMade() throws {
        let lines = RetainerText.lines(Self.path(named: true), objectType: "SettingsContextImp")
        #expect(
            lines == [
                "held by  Notifications",
                "         ─ .observers[0] ─▶ closure context   ◀ suspect: the reference to cut, made at SettingsNode.swift:20",
                "         ─ capture: closure #1 in SettingsContextImp.didBecomeActive() (SettingsNode.swift:20) ─▶ SettingsContextImp",
            ])
        let closure = try #require(Self.path(named: true).suspectClosure)
        #expect(RetainerText.closureLocation(closure, root: "/app") == "Sources/App/SettingsNode.swift:20")
    }

    @Test func anUnnamedClosureKeepsTodaysWords() {
        let lines = RetainerText.lines(Self.path(named: false), objectType: "SettingsContextImp")
        #expect(
            lines == [
                "held by  Notifications",
                "         ─ .observers[0] ─▶ closure context   ◀ suspect: the reference to cut",
                "         ─ capture ─▶ SettingsContextImp",
            ])
    }

    /// A tree's picture says where the suspect's closure is made, on the object's line.
    @Test func aDiagramsNoteSaysWhereTheSuspectsClosureIsMade() throws {
        let node = NodeInfo(
            id: 2, parent: nil, kind: "SettingsFlow", name: "", status: .leaked,
            objects: [ObjectInfo(index: 0, role: "context", typeName: "SettingsContextImp", isAlive: true)],
            attachedAtNanos: 0, detachedAtNanos: 1_000_000_000, depth: 0, retainers: [Self.path(named: true)])
        let view = TreeView(session: SessionID(rawValue: 1), pid: 1, processName: "p", nodes: [node])
        let box = try #require(DiagramMapping.diagram(for: view).nodes.first)
        #expect(box.note?.split(separator: "\n").last == "context: held by Notifications.observers[0], made at SettingsNode.swift:20")
    }
}
