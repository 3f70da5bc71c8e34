import NodescopeCollector

/// What `nodescope why` prints: for each node asked about, its path, kind and state, then each
/// object with what holds it (``RetainerText``), or that it was released.
package enum ExplanationText {
    /// The text for `nodes` (as the collector holds them once the host answered), each at the
    /// path of names of `paths` with the same index.
    package static func render(_ nodes: [NodeInfo], paths: [[String]], colorful: Bool = false) -> String {
        var lines: [String] = []
        for (index, node) in nodes.enumerated() {
            let names = index < paths.count ? paths[index] : [node.displayName]
            let shownPath = names.map(VisibleText.escaped).joined(separator: " › ")
            let mark = Vocabulary.paint(Vocabulary.mark(node.status), Vocabulary.color(node.status), enabled: colorful)
            let id = nodes.count > 1 ? "  [node \(node.id)]" : ""
            lines.append("\(shownPath)  (\(VisibleText.escaped(node.kind)))  \(mark)\(id)")
            for object in node.objects {
                let name = VisibleText.escaped(RetainerText.objectName(object))
                guard object.isAlive else {
                    lines.append("  \(name): released")
                    continue
                }
                guard let path = node.retainers?.first(where: { $0.objectIndex == object.index }) else {
                    lines.append("  \(name): alive; the host sent no path for it")
                    continue
                }
                lines.append("  \(name)")
                lines += RetainerText.lines(path, objectType: object.typeName).map { "    " + $0 }
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
