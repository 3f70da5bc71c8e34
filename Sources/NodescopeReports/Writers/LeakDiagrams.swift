import NodescopeCollector
import NodescopeGraphviz

/// `check --svg-dir`: one diagram per leaked fingerprint, `leak-<fingerprint>.svg`, showing the
/// leaked node in its context: the subtree of its former parent (the whole tree for a root), as
/// the tree of its process was when the process ended, leaks drawn red, each leaked node's box
/// with what holds it, hop by hop, when its host sent retainer paths.
package enum LeakDiagrams {
    /// One diagram to write.
    package struct File: Sendable {
        /// The file's name, `leak-<fingerprint>.svg`.
        package var name: String
        /// The SVG text.
        package var svg: String
    }

    /// The diagrams of `report`'s leaks, from the trees of their processes.
    package static func render(_ report: LeakReport, trees: [SessionID: TreeView]) throws(ReportError) -> [File] {
        var files: [File] = []
        var seen = Set<String>()
        for group in report.groups where seen.insert(group.fingerprint).inserted {
            guard let view = trees[group.first.session] else { continue }
            let leaks = group.records.filter { $0.session == group.first.session }
            let parentPath = group.path.count > 1 ? group.path.dropLast().joined(separator: "/") : nil
            // The leaked nodes show what holds them hop by hop (and every box its paths as a tooltip).
            let full = Set(leaks.map(\.nodeID))
            let drawing: DiagramRenderer.Drawing
            do {
                drawing = try TreeDiagram.draw(
                    view, leaks: leaks, format: .svg, options: .init(rootPath: parentPath, fullRetainerPaths: full))
            } catch {
                // The parent's name may not lead to it (a renamed or duplicate name): draw it all.
                do {
                    drawing = try TreeDiagram.draw(view, leaks: leaks, format: .svg, options: .init(fullRetainerPaths: full))
                } catch {
                    throw ReportError("cannot draw the leak \(group.fingerprint): \(error)")
                }
            }
            files.append(File(name: "leak-\(group.fingerprint).svg", svg: drawing.text))
        }
        return files
    }
}
