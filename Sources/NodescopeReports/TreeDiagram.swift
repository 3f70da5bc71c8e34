import NodescopeCollector
import NodescopeGraphviz

/// A process's tree as a diagram (SVG or DOT): the one path from a ``TreeView`` to Graphviz,
/// shared by `export`, `demo` and `check`'s diagrams of leaks.
package enum TreeDiagram {
    /// What to draw of a tree.
    package struct Options: Sendable {
        /// How to place the boxes.
        package var layout: DiagramLayout = .auto
        /// Which way the tree grows.
        package var orientation: DiagramOrientation = .auto
        /// The page to fit, if any.
        package var page: DiagramPage?
        /// The subtree to draw, as a path of names (``TreeView/node(atPath:)``); nil for all.
        package var rootPath: String?
        /// Levels below the root to draw; nil for all.
        package var depth: Int?
        /// Runs of more same-named siblings than this fold into a placeholder; nil for the
        /// renderer's default.
        package var siblingRunLimit: Int?
        /// The nodes whose boxes show their retainer paths in full, hop by hop; the other
        /// detached nodes show one line per object (`context: held by Session.listeners[3]`),
        /// and every one has the full paths as its tooltip.
        package var fullRetainerPaths: Set<UInt64>

        /// Options that draw the whole tree with the automatic layout.
        package init(
            layout: DiagramLayout = .auto, orientation: DiagramOrientation = .auto, page: DiagramPage? = nil, rootPath: String? = nil,
            depth: Int? = nil, siblingRunLimit: Int? = nil, fullRetainerPaths: Set<UInt64> = []
        ) {
            self.layout = layout
            self.orientation = orientation
            self.page = page
            self.rootPath = rootPath
            self.depth = depth
            self.siblingRunLimit = siblingRunLimit
            self.fullRetainerPaths = fullRetainerPaths
        }
    }

    /// Draws `view`, leaks marked from `leaks`.
    ///
    /// - Throws: ``ReportError`` when the root path names no node, or Graphviz fails.
    package static func draw(
        _ view: TreeView, leaks: [LeakRecord], format: DiagramFormat, options: Options = .init()
    ) throws(ReportError) -> DiagramRenderer.Drawing {
        var diagramOptions = DiagramOptions()
        diagramOptions.layout = options.layout
        diagramOptions.orientation = options.orientation
        diagramOptions.page = options.page
        diagramOptions.maxDepth = options.depth
        if let limit = options.siblingRunLimit { diagramOptions.collapseSiblingRunsLongerThan = limit }
        if let rootPath = options.rootPath {
            guard let node = view.node(atPath: rootPath) else {
                throw ReportError(
                    "no node at \(rootPath) in \(VisibleText.escaped(view.processName)); paths are node names from a "
                        + "root, like AppFlow/LoggedInFlow (or the last names of one, like LoggedInFlow)")
            }
            diagramOptions.rootID = node.id
        }
        do {
            return try DiagramRenderer.shared.draw(
                DiagramMapping.diagram(for: view, leaks: leaks, fullRetainerPaths: options.fullRetainerPaths), format: format,
                options: diagramOptions)
        } catch {
            throw ReportError("cannot draw the diagram: \(error)")
        }
    }
}
