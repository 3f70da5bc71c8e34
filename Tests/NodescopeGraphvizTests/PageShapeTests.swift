import Foundation
import Testing

@testable import NodescopeGraphviz

/// The default export of wide trees is a picture a person can look at: neither a strip nor a
/// column (between 1:4 and 4:1), and no two boxes overlap. Checked on the drawn SVG.
@Suite("Drawings that fit a page")
struct PageShapeTests {
    static func check(_ diagram: Diagram, options: DiagramOptions = .init()) throws -> SVGBoxes {
        let drawing = try DiagramRenderer.shared.draw(diagram, format: .svg, options: options)
        let svg = try SVGBoxes(drawing.text)
        // To look at the pictures: NODESCOPE_PICTURES=/some/dir swift test --filter PageShapeTests
        if let directory = ProcessInfo.processInfo.environment["NODESCOPE_PICTURES"] {
            let name = diagram.title.map { $0.isLetter || $0.isNumber ? $0 : "-" }
            try drawing.text.write(toFile: "\(directory)/\(String(name)).svg", atomically: true, encoding: .utf8)
        }
        let choice = try #require(drawing.choice)
        print(
            "\(diagram.title): \(choice.layout) \(choice.orientation) outline ≤ \(choice.outlineLimit): "
                + "\(Int(svg.width)) × \(Int(svg.height)) pt, aspect \(svg.aspect)")
        #expect(svg.boxes.count == drawing.drawnNodes + (drawing.hiddenNodes > 0 ? 1 : 0) || drawing.hiddenNodes > 0)
        #expect(svg.overlaps().isEmpty, "\(svg.overlaps().prefix(5))")
        return svg
    }

    @Test("four children per node: the default export is between 1:4 and 4:1", arguments: [100, 400, 2_000, 10_000])
    func fourChildren(count: Int) throws {
        let diagram = SampleDiagrams.fourChildren(count: count)
        let svg = try Self.check(diagram)
        #expect(svg.boxes.count == count)
        #expect(svg.aspect >= 0.25 && svg.aspect <= 4, "aspect \(svg.aspect)")
    }

    /// Trees shaped like the samples' (their outlines in SamplesTests), with their kinds and
    /// parts, and sample-nodes scaled up with `--nodes 500`.
    static let sampleShapes: [Diagram] = {
        func tree(_ title: String, _ lines: [(depth: Int, title: String, kind: String, parts: [String])]) -> Diagram {
            var stack: [UInt64] = []
            var nodes: [DiagramNode] = []
            for (index, line) in lines.enumerated() {
                stack.removeLast(stack.count - line.depth)
                let id = UInt64(index + 1)
                nodes.append(DiagramNode(id: id, parent: stack.last, title: line.title, kind: line.kind, parts: line.parts))
                stack.append(id)
            }
            return Diagram(title: title, nodes: nodes)
        }
        let nodes = tree(
            "sample-nodes",
            [
                (0, "AppFlow", "Flow", ["context: AppContextImp", "view: WindowViewController"]),
                (1, "LoggedInFlow", "Flow", ["context: LoggedInContextImp", "worker: SessionWorker", "view: TabBarController"]),
                (2, "FeedFlow", "Flow", ["context: FeedContextImp", "worker: FeedRefreshWorker", "view: FeedViewController"]),
                (2, "ProfileFlow", "Flow", ["context: ProfileContextImp", "view: ProfileViewController"]),
                (2, "SettingsFlow", "Flow", ["context: SettingsContextImp", "worker: SettingsSyncWorker", "view: SettingsView"]),
            ])
        var scaled = nodes.nodes.prefix(3).map { $0 }
        var nextID: UInt64 = 100
        for section in 0..<10 {
            let sectionID = nextID
            nextID += 1
            scaled.append(
                DiagramNode(
                    id: sectionID, parent: 3, title: "FeedSectionFlow", kind: "Flow", parts: ["context: FeedSectionContextImp \(section)"]))
            for _ in 0..<50 {
                scaled.append(
                    DiagramNode(id: nextID, parent: sectionID, title: "FeedItemFlow", kind: "Flow", parts: ["context: FeedItemContextImp"]))
                nextID += 1
            }
        }
        scaled += nodes.nodes.suffix(2)
        return [
            nodes,
            Diagram(title: "sample-nodes --nodes 500", nodes: scaled),
            tree(
                "sample-ribs",
                [
                    (0, "RootRouter", "Router", ["router", "interactor", "view"]),
                    (1, "LoggedInRouter", "Router", ["router", "interactor"]),
                    (2, "RequestRouter", "Router", ["router", "interactor", "view"]),
                ]),
            tree(
                "sample-viper",
                [
                    (0, "AppCoordinator", "Coordinator", ["coordinator"]), (1, "HomeCoordinator", "Coordinator", ["coordinator"]),
                    (2, "HomeModule", "ViperModule", ["presenter", "interactor", "router", "view"]),
                    (2, "ProfileCoordinator", "Coordinator", ["coordinator"]),
                    (3, "ProfileDisplayModule", "ViperModule", ["presenter", "interactor", "router", "view"]),
                ]),
            tree(
                "sample-bfg",
                [
                    (0, "AppGraph", "Feature", ["graph", "view"]),
                    (1, "MainWordListGraph", "Feature", ["graph", "view", "model", "router"]),
                    (2, "SearchGraph", "Feature", ["graph", "view", "model"]), (2, "SettingsScreen", "Feature", ["view"]),
                ]),
            tree(
                "sample-modules",
                [
                    (0, "HomeModule", "Module", ["module", "view"]), (1, "ProductArrayModule", "Module", ["module", "view"]),
                    (2, "ProductModule", "Module", ["module", "view"]),
                ]),
            SampleDiagrams.allStates,
            SampleDiagrams.appTree(sections: 6, screensPerSection: 9, itemsPerScreen: 7),
        ]
    }()

    @Test("trees shaped like the samples': between 1:4 and 4:1", arguments: sampleShapes.indices)
    func sampleShaped(index: Int) throws {
        let svg = try Self.check(Self.sampleShapes[index])
        #expect(svg.aspect >= 0.25 && svg.aspect <= 4, "aspect \(svg.aspect)")
    }

    @Test("a page picks the layout: portrait or landscape, scaled down as far as readable")
    func pages() throws {
        let diagram = SampleDiagrams.fourChildren(count: 400)
        let portrait = try DiagramRenderer.shared.draw(diagram, format: .svg, options: .init(page: DiagramPage(parsing: "2000x4000")))
        let landscape = try DiagramRenderer.shared.draw(diagram, format: .svg, options: .init(page: DiagramPage(parsing: "5000x1600")))
        let tall = try SVGBoxes(portrait.text)
        let wide = try SVGBoxes(landscape.text)
        #expect(tall.aspect < 0.8 && wide.aspect > 1.25, "\(tall.aspect) \(wide.aspect)")
        #expect(tall.overlaps().isEmpty && wide.overlaps().isEmpty)
        // Too big for the page at 8 pt: drawn at the smallest readable scale, and said so.
        let fit = try #require(portrait.fit)
        #expect(!fit.fits)
        #expect(fit.scale == fit.minimumScale && fit.minimumScale == 8.0 / 9.0)
        #expect(abs(tall.width - fit.fullWidth * fit.scale) < 0.02)

        // A small tree fits a page as it is, and is not blown up.
        let small = try DiagramRenderer.shared.draw(
            SampleDiagrams.allStates, format: .svg, options: .init(page: DiagramPage(parsing: "screen")))
        let smallFit = try #require(small.fit)
        #expect(smallFit.fits)
        let smallBoxes = try SVGBoxes(small.text)
        #expect(smallBoxes.width <= 1440.01 && smallBoxes.height <= 810.01)
        #expect(smallFit.scale <= 1 && smallFit.scale >= smallFit.minimumScale)
    }

    @Test(
        "every layout and orientation by hand: no overlaps",
        arguments: [
            (DiagramLayout.tidy, DiagramOrientation.topDown), (.tidy, .leftToRight), (.compact, .auto), (.dot, .leftToRight),
        ])
    func byHand(layout: DiagramLayout, orientation: DiagramOrientation) throws {
        let diagram = SampleDiagrams.fourChildren(count: 120)
        let drawing = try DiagramRenderer.shared.draw(diagram, format: .svg, options: .init(layout: layout, orientation: orientation))
        #expect(drawing.choice?.layout == layout)
        #expect(drawing.choice?.orientation == (orientation == .auto ? .topDown : orientation))
        let svg = try SVGBoxes(drawing.text)
        #expect(svg.boxes.count == 120)
        #expect(svg.overlaps().isEmpty)
        if orientation == .leftToRight { #expect(svg.aspect < 1) }
    }

    @Test("one node in every layout and orientation, with and without a page")
    func oneNode() throws {
        let diagram = Diagram(title: "", nodes: [DiagramNode(id: 7, parent: nil, title: "Alone")])
        for layout in DiagramLayout.allCases {
            for orientation in DiagramOrientation.allCases where !(layout == .compact && orientation == .leftToRight) {
                for page in [nil, DiagramPage(parsing: "a4")] {
                    let drawing = try DiagramRenderer.shared.draw(
                        diagram, format: .svg, options: .init(layout: layout, orientation: orientation, page: page))
                    #expect(try SVGBoxes(drawing.text).boxes.count == 1)
                    #expect(drawing.fit?.fits ?? true)
                }
            }
        }
    }

    @Test("compact grows top-down only: left-to-right is an error that says what to do")
    func compactLeftToRight() {
        #expect {
            try DiagramRenderer.shared.draw(
                SampleDiagrams.allStates, format: .svg, options: .init(layout: .compact, orientation: .leftToRight))
        } throws: { error in
            (error as? RenderError)?.code == .invalidOptions && "\(error)".contains("--layout tidy")
        }
    }

    @Test("pages by name and by size")
    func pageNames() {
        #expect(DiagramPage(parsing: "A4") == DiagramPage(width: 595, height: 842, name: "a4"))
        #expect(DiagramPage(parsing: "a4-landscape")?.width == 842)
        #expect(DiagramPage(parsing: "800x600") == DiagramPage(width: 800, height: 600))
        #expect(DiagramPage(parsing: "1920x1080px").map { ($0.width, $0.height) } ?? (0, 0) == (1440, 810))
        let millimetres = DiagramPage(parsing: "210x297mm")
        #expect(abs((millimetres?.width ?? 0) - 595.28) < 0.01 && abs((millimetres?.height ?? 0) - 841.89) < 0.01)
        #expect(DiagramPage(parsing: "8.5inx11in")?.width == 612)
        for bad in ["", "a5", "x", "800", "800x", "x600", "0x600", "-5x600", "800x600x2", "8.5.1x11", "800y600", "1e3x600", "nanxnan"] {
            #expect(DiagramPage(parsing: bad) == nil, "\(bad)")
        }
    }
}
