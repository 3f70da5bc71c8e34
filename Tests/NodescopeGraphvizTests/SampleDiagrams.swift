import NodescopeGraphviz
import SeededRandom

/// Diagrams shared by the tests.
enum SampleDiagrams {
    /// A small app tree with one node in every state, and a title that needs escaping.
    static let allStates = Diagram(
        title: "sample \"app\" <pid 4242> & co \\ 12:00:00",
        nodes: [
            DiagramNode(
                id: 1, parent: nil, title: "AppFlow", kind: "Flow",
                parts: ["context: AppContextImp", "worker: AppStartWorker", "view: WindowViewController"]),
            DiagramNode(
                id: 2, parent: 1, title: "LoggedInFlow", kind: "Flow",
                parts: ["context: LoggedInContextImp", "view: TabBarController"]),
            DiagramNode(
                id: 3, parent: 2, title: "FeedFlow", kind: "Flow",
                parts: ["context: FeedContextImp", "worker: FeedRefreshWorker ×2", "view: FeedViewController"]),
            DiagramNode(
                id: 4, parent: 3, title: "FeedItemFlow", kind: "Flow",
                parts: ["context: FeedItemContextImp"], state: .inactive),
            DiagramNode(
                id: 5, parent: 3, title: "StoryFlow", kind: "Flow",
                parts: ["context: StoryContextImp", "view: StoryViewController"],
                releasedParts: ["worker: StoryPlaybackWorker"],
                state: .leaked, note: "leaked 1.2 s after detach"),
            DiagramNode(
                id: 6, parent: 2, title: "ProfileFlow", kind: "Flow",
                parts: ["view: ProfileViewController"], releasedParts: ["context: ProfileContextImp"],
                state: .detached, note: "detached 0.4 s ago"),
            DiagramNode(
                id: 7, parent: 2, title: "SettingsFlow", kind: "Router",
                releasedParts: ["interactor: SettingsInteractor", "view: SettingsViewController"],
                state: .lateRelease, note: "released 3.4 s late"),
            DiagramNode(
                id: 8, parent: 1, title: "OnboardingFlow", kind: "Module",
                parts: ["presenter: <OnboardingPresenter & \"Tracking\">"],
                state: .unverified, note: "process ended 0.2 s after detach"),
            DiagramNode(id: 9, parent: 1, title: "… 240 more FeedItemFlow", state: .collapsed),
        ])

    /// A deterministic pseudo-random tree of `count` nodes with labels of varied widths.
    ///
    /// Parents are picked among recent nodes so the tree has both depth and wide fan-outs.
    static func randomTree(count: Int, seed: UInt64, statesEvery: Int = 0) -> Diagram {
        var random = SplitMix64(seed: seed)
        var nodes: [DiagramNode] = []
        nodes.reserveCapacity(count)
        let names = ["FeedFlow", "A", "ProfileSettingsNotificationsFlow", "ItemFlow", "X", "CheckoutPaymentMethodFlow"]
        for index in 0..<count {
            let id = UInt64(index + 1)
            let parent: UInt64? = index == 0 ? nil : UInt64(1 + Int(random.next() % UInt64(min(index, 40))) + max(0, index - 40))
            let name = names[Int(random.next() % UInt64(names.count))]
            let partCount = Int(random.next() % 4)
            let parts = (0..<partCount).map { "part\($0): \(String(repeating: "W", count: Int(random.next() % 20)))" }
            var state = DiagramNodeState.active
            if statesEvery > 0 && index % statesEvery == statesEvery - 1 {
                state = DiagramNodeState.allCases[index / statesEvery % DiagramNodeState.allCases.count]
            }
            nodes.append(
                DiagramNode(
                    id: id, parent: parent, title: "\(name)\(index)", kind: "Flow",
                    parts: parts, state: state))
        }
        return Diagram(title: "random \(count)", nodes: nodes)
    }

    /// An app-like tree: a root with `sections` sections, each with screens, each with items.
    static func appTree(sections: Int, screensPerSection: Int, itemsPerScreen: Int) -> Diagram {
        var nodes: [DiagramNode] = [
            DiagramNode(
                id: 1, parent: nil, title: "AppFlow", kind: "Flow",
                parts: ["context: AppContextImp", "view: WindowViewController"])
        ]
        var nextID: UInt64 = 2
        func add(
            _ parent: UInt64, _ title: String, _ kind: String, _ parts: [String], _ state: DiagramNodeState = .active, note: String? = nil
        ) -> UInt64 {
            let id = nextID
            nextID += 1
            nodes.append(DiagramNode(id: id, parent: parent, title: title, kind: kind, parts: parts, state: state, note: note))
            return id
        }
        for section in 0..<sections {
            let sectionID = add(
                1, "Section\(section)Flow", "Flow", ["context: Section\(section)ContextImp", "view: Section\(section)ViewController"])
            for screen in 0..<screensPerSection {
                let leaked = (section * screensPerSection + screen) % 17 == 5
                let screenID = add(
                    sectionID, "Screen\(screen)Flow", "Flow",
                    ["context: Screen\(screen)ContextImp", "worker: LoadWorker", "view: Screen\(screen)ViewController"],
                    leaked ? .leaked : .active, note: leaked ? "leaked 1.0 s after detach" : nil)
                for item in 0..<itemsPerScreen {
                    _ = add(screenID, "ItemFlow", "Flow", ["context: Item\(item)ContextImp"], item % 5 == 4 ? .inactive : .active)
                }
            }
        }
        return Diagram(title: "SampleApp (pid 4242) at 12:00:00", nodes: nodes)
    }

    /// A tree where every node has four children until `count` nodes (filled level by level),
    /// with distinct names, so nothing folds: the shape of the issue's measurements. Every third
    /// node has a part, every fifth a second one.
    static func fourChildren(count: Int) -> Diagram {
        let nodes = (0..<count).map { index in
            var parts: [String] = []
            if index % 3 == 0 { parts.append("context: Screen\(index)Context") }
            if index % 5 == 0 { parts.append("worker: Refresh\(index)Worker") }
            return DiagramNode(
                id: UInt64(index + 1), parent: index == 0 ? nil : UInt64((index - 1) / 4 + 1), title: "Screen\(index)Flow",
                kind: "Flow", parts: parts)
        }
        return Diagram(title: "four children per node, \(count) nodes", nodes: nodes)
    }
}
