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
}
