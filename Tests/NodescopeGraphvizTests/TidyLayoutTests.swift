import Testing

@testable import NodescopeGraphviz

@Suite("Tidy layout")
struct TidyLayoutTests {
    struct Box {
        var id: UInt64
        var minX, maxX, minY, maxY: Double
        func overlaps(_ other: Box) -> Bool {
            minX < other.maxX && other.minX < maxX && minY < other.maxY && other.minY < maxY
        }
    }

    static func boxes(_ diagram: Diagram, _ result: TidyLayout.Result) -> [UInt64: Box] {
        var boxes: [UInt64: Box] = [:]
        for node in diagram.nodes where boxes[node.id] == nil {
            guard let centre = result.positions[node.id] else { continue }
            let size = DotWriter.estimatedBoxSize(of: node)
            boxes[node.id] = Box(
                id: node.id, minX: centre.x - size.width / 2, maxX: centre.x + size.width / 2,
                minY: centre.y - size.height / 2, maxY: centre.y + size.height / 2)
        }
        return boxes
    }

    @Test(
        "no two boxes overlap, parents are above children, siblings keep their order",
        arguments: [(1, 1), (2, 60), (3, 700), (4, 1_500)] as [(UInt64, Int)])
    func geometry(seed: UInt64, count: Int) throws {
        let diagram = SampleDiagrams.randomTree(count: count, seed: seed)
        _ = try checkGeometry(diagram)
    }

    @Test("an app-like tree with leaf-heavy screens: stacks, and the same guarantees")
    func appGeometry() throws {
        let stacks = try checkGeometry(SampleDiagrams.appTree(sections: 6, screensPerSection: 9, itemsPerScreen: 7))
        #expect(stacks == 6 * 9)
    }

    /// Checks the layout of `diagram` and returns how many stacked columns it has.
    func checkGeometry(_ diagram: Diagram) throws -> Int {
        let count = diagram.nodes.count
        let result = TidyLayout.layout(diagram)
        let boxes = Self.boxes(diagram, result)
        #expect(boxes.count == count)
        let sorted = boxes.values.sorted { $0.minX < $1.minX }
        var overlaps = 0
        for (index, box) in sorted.enumerated() {
            for other in sorted[(index + 1)...] {
                if other.minX >= box.maxX { break }
                if box.overlaps(other) { overlaps += 1 }
            }
        }
        #expect(overlaps == 0)
        for box in boxes.values {
            #expect(box.minX >= -0.001 && box.maxX <= result.width + 0.001)
            #expect(box.minY >= -0.001 && box.maxY <= result.height + 0.001)
        }

        var children: [UInt64: [UInt64]] = [:]
        for node in diagram.nodes {
            guard let parent = node.parent else { continue }
            children[parent, default: []].append(node.id)
            let parentBox = try #require(boxes[parent])
            let childBox = try #require(boxes[node.id])
            #expect(parentBox.maxY < childBox.minY)
        }
        let leaves = Set(diagram.nodes.map(\.id)).subtracting(children.keys)
        var stacks = 0
        for (parent, kids) in children {
            if kids.count >= TidyLayout.stackMinimum && kids.allSatisfy(leaves.contains) {
                // Stacked: top to bottom, left-aligned, each with a route from the parent.
                stacks += 1
                let ys = kids.map { result.positions[$0]!.y }
                #expect(ys == ys.sorted() && Set(ys).count == ys.count)
                #expect(Set(kids.map { boxes[$0]!.minX.rounded() }).count == 1)
                for kid in kids {
                    let route = try #require(result.edgeRoutes[kid])
                    #expect(route.first!.y == boxes[parent]!.maxY)
                    #expect(route.first!.x > boxes[parent]!.minX && route.first!.x < boxes[parent]!.maxX)
                    #expect(abs(route.last!.x - boxes[kid]!.minX) < 0.001)
                }
            } else {
                let xs = kids.map { result.positions[$0]!.x }
                #expect(xs == xs.sorted() && Set(xs).count == xs.count)
                // Walker centres a parent over the room its first and last child take, which for
                // an outline's root is more than its box: the parent is over its children.
                #expect(result.positions[parent]!.x >= boxes[kids.first!]!.minX - 0.001)
                #expect(result.positions[parent]!.x <= boxes[kids.last!]!.maxX + 0.001)
                for kid in kids {
                    let route = try #require(result.edgeRoutes[kid])
                    #expect(route.first == TidyLayout.Point(x: result.positions[parent]!.x, y: boxes[parent]!.maxY))
                    #expect(route.last == TidyLayout.Point(x: result.positions[kid]!.x, y: boxes[kid]!.minY))
                }
            }
        }
        #expect(result.edgeRoutes.count == diagram.nodes.count { $0.parent != nil })
        if count <= 800 {
            // No segment of any route crosses a box other than its own two ends.
            var crossings = 0
            for node in diagram.nodes {
                guard let parent = node.parent, let route = result.edgeRoutes[node.id] else { continue }
                for (a, b) in zip(route, route.dropFirst()) {
                    #expect(a.x == b.x || a.y == b.y)
                    let segment = Box(id: 0, minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y))
                    for box in sorted where box.id != node.id && box.id != parent {
                        let inner = Box(id: 0, minX: box.minX + 0.01, maxX: box.maxX - 0.01, minY: box.minY + 0.01, maxY: box.maxY - 0.01)
                        if segment.minX <= inner.maxX && inner.minX <= segment.maxX && segment.minY <= inner.maxY
                            && inner.minY <= segment.maxY
                        {
                            crossings += 1
                        }
                    }
                }
            }
            #expect(crossings == 0)
        }
        return stacks
    }

    @Test(
        "compact: outlines and columns overlap nothing, hang below their parents, and no edge crosses a box",
        arguments: [(5, 60, 8), (6, 700, 40), (7, 1_500, 200)] as [(UInt64, Int, Int)])
    func compactGeometry(seed: UInt64, count: Int, limit: Int) throws {
        for diagram in [SampleDiagrams.randomTree(count: count, seed: seed), SampleDiagrams.fourChildren(count: count)] {
            let result = TidyLayout.layout(diagram, outlineLimit: limit)
            try checkRoutes(diagram, result, vertical: true)
        }
    }

    @Test("left-to-right: children right of their parents, siblings top to bottom, no overlaps")
    func leftToRight() throws {
        for diagram in [SampleDiagrams.randomTree(count: 300, seed: 8), SampleDiagrams.fourChildren(count: 300)] {
            let result = TidyLayout.layout(diagram, orientation: .leftToRight)
            try checkRoutes(diagram, result, vertical: false)
            let boxes = Self.boxes(diagram, result)
            var children: [UInt64: [UInt64]] = [:]
            for node in diagram.nodes { if let parent = node.parent { children[parent, default: []].append(node.id) } }
            for kids in children.values {
                let ys = kids.map { result.positions[$0]!.y }
                #expect(ys == ys.sorted())
            }
            #expect(boxes.count == diagram.nodes.count)
        }
    }

    /// No overlaps, every box inside the drawing, children below (or right of) their parents, and
    /// every edge an axis-aligned route from its parent's box to its child's that crosses no
    /// other box.
    func checkRoutes(_ diagram: Diagram, _ result: TidyLayout.Result, vertical: Bool) throws {
        let boxes = Self.boxes(diagram, result)
        #expect(boxes.count == diagram.nodes.count)
        let sorted = boxes.values.sorted { $0.minX < $1.minX }
        var overlaps = 0
        for (index, box) in sorted.enumerated() {
            for other in sorted[(index + 1)...] {
                if other.minX >= box.maxX { break }
                if box.overlaps(other) { overlaps += 1 }
            }
        }
        #expect(overlaps == 0)
        for box in boxes.values {
            #expect(box.minX >= -0.001 && box.maxX <= result.width + 0.001)
            #expect(box.minY >= -0.001 && box.maxY <= result.height + 0.001)
        }
        var crossings = 0
        for node in diagram.nodes {
            guard let parent = node.parent else { continue }
            let parentBox = try #require(boxes[parent])
            let childBox = try #require(boxes[node.id])
            if vertical { #expect(parentBox.maxY < childBox.minY) } else { #expect(parentBox.maxX < childBox.minX) }
            let route = try #require(result.edgeRoutes[node.id])
            let start = route.first!
            let end = route.last!
            #expect(start.x >= parentBox.minX - 0.001 && start.x <= parentBox.maxX + 0.001)
            #expect(start.y >= parentBox.minY - 0.001 && start.y <= parentBox.maxY + 0.001)
            #expect(end.x >= childBox.minX - 0.001 && end.x <= childBox.maxX + 0.001)
            #expect(end.y >= childBox.minY - 0.001 && end.y <= childBox.maxY + 0.001)
            guard diagram.nodes.count <= 800 else { continue }
            for (a, b) in zip(route, route.dropFirst()) {
                #expect(abs(a.x - b.x) < 0.001 || abs(a.y - b.y) < 0.001)
                let segment = Box(id: 0, minX: min(a.x, b.x), maxX: max(a.x, b.x), minY: min(a.y, b.y), maxY: max(a.y, b.y))
                for box in sorted where box.id != node.id && box.id != parent {
                    let inner = Box(id: 0, minX: box.minX + 0.01, maxX: box.maxX - 0.01, minY: box.minY + 0.01, maxY: box.maxY - 0.01)
                    if segment.minX <= inner.maxX && inner.minX <= segment.maxX && segment.minY <= inner.maxY
                        && inner.minY <= segment.maxY
                    {
                        crossings += 1
                    }
                }
            }
        }
        #expect(crossings == 0)
    }

    @Test("a 100,000-node tree lays out without overlaps in any band")
    func hundredThousand() {
        let diagram = SampleDiagrams.randomTree(count: 100_000, seed: 11)
        let result = TidyLayout.layout(diagram)
        #expect(result.positions.count == 100_000)
        var bands: [Double: [Box]] = [:]
        for box in Self.boxes(diagram, result).values {
            // Boxes are top-aligned in their band.
            bands[(box.minY * 100).rounded() / 100, default: []].append(box)
        }
        var overlaps = 0
        for band in bands.values {
            let sorted = band.sorted { $0.minX < $1.minX }
            for index in sorted.indices.dropFirst() where sorted[index].minX < sorted[index - 1].maxX {
                overlaps += 1
            }
        }
        #expect(overlaps == 0)
    }

    @Test("a 100,000-deep chain does not exhaust the stack")
    func deepChain() {
        let nodes = (1...100_000).map { DiagramNode(id: UInt64($0), parent: $0 == 1 ? nil : UInt64($0 - 1), title: "Chain") }
        let result = TidyLayout.layout(Diagram(title: "", nodes: nodes))
        #expect(result.positions.count == 100_000)
        #expect(Set(result.positions.values.map(\.x)).count == 1)
        #expect(result.positions[100_000]!.y > result.positions[1]!.y)
    }

    @Test("roots, orphans and repeated ids")
    func forest() {
        let diagram = Diagram(
            title: "",
            nodes: [
                DiagramNode(id: 1, parent: nil, title: "RootA"),
                DiagramNode(id: 2, parent: 1, title: "Child"),
                DiagramNode(id: 3, parent: nil, title: "RootB"),
                DiagramNode(id: 4, parent: 42, title: "Orphan"),
                DiagramNode(id: 2, parent: 3, title: "Repeated"),
            ])
        let result = TidyLayout.layout(diagram)
        #expect(result.positions.count == 4)
        let rootA = result.positions[1]!
        let rootB = result.positions[3]!
        let orphan = result.positions[4]!
        #expect(rootA.x < rootB.x && rootB.x < orphan.x)
        #expect(rootA.y == rootB.y)
        #expect(result.positions[2]!.x == rootA.x)
        #expect(TidyLayout.layout(Diagram(title: "", nodes: [])) == TidyLayout.Result(positions: [:], width: 0, height: 0))
    }

    @Test("custom sizes are respected")
    func customSizes() {
        let diagram = Diagram(
            title: "",
            nodes: [
                DiagramNode(id: 1, parent: nil, title: "R"),
                DiagramNode(id: 2, parent: 1, title: "A"),
                DiagramNode(id: 3, parent: 1, title: "B"),
            ])
        let result = TidyLayout.layout(diagram) { _ in (100, 20) }
        #expect(result.positions[3]!.x - result.positions[2]!.x == 100 + TidyLayout.siblingGap)
        #expect(result.positions[2]!.y - result.positions[1]!.y == 20 + TidyLayout.levelGap)
        #expect(result.width == 200 + TidyLayout.siblingGap)
        #expect(result.height == 40 + TidyLayout.levelGap)
        let middle = 20 + TidyLayout.levelGap / 2
        #expect(
            result.edgeRoutes[2] == [
                TidyLayout.Point(x: result.positions[1]!.x, y: 20), TidyLayout.Point(x: result.positions[1]!.x, y: middle),
                TidyLayout.Point(x: 50, y: middle), TidyLayout.Point(x: 50, y: 20 + TidyLayout.levelGap),
            ])
        #expect(result.edgeRoutes[1] == nil)
    }

    @Test("three or more leaves hang in a column from a rail under the parent")
    func stackedLeaves() {
        var nodes = [
            DiagramNode(id: 1, parent: nil, title: "R"), DiagramNode(id: 2, parent: 1, title: "P"),
            DiagramNode(id: 3, parent: 1, title: "Q"),
        ]
        for leaf in 0..<5 { nodes.append(DiagramNode(id: UInt64(10 + leaf), parent: 2, title: "L")) }
        nodes.append(DiagramNode(id: 20, parent: 3, title: "Deep"))
        nodes.append(DiagramNode(id: 21, parent: 20, title: "Deeper"))
        let result = TidyLayout.layout(Diagram(title: "", nodes: nodes)) { node in (node.title == "P" ? 100 : 60, 20) }
        let p = result.positions[2]!
        let rail = p.x - (50 - TidyLayout.railInset)
        for leaf in 0..<5 {
            let centre = result.positions[UInt64(10 + leaf)]!
            #expect(centre.x == rail + TidyLayout.stackIndent + 30)
            #expect(centre.y == p.y + 10 + TidyLayout.outlineGap + 10 + Double(leaf) * (20 + TidyLayout.stackGap))
            #expect(
                result.edgeRoutes[UInt64(10 + leaf)] == [
                    TidyLayout.Point(x: rail, y: p.y + 10), TidyLayout.Point(x: rail, y: centre.y),
                    TidyLayout.Point(x: rail + TidyLayout.stackIndent, y: centre.y),
                ])
        }
        // The column is reserved at every depth it spans: the neighbour's deep chain stays clear.
        let columnRight = rail + TidyLayout.stackIndent + 60
        #expect(result.positions[21]!.x - 30 >= columnRight + TidyLayout.subtreeGap - 0.001)
        #expect(result.height == max(result.positions[14]!.y, result.positions[21]!.y) + 10)
    }
}
