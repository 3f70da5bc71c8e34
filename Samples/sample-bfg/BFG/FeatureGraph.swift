import NodesDebug

/// A feature graph: the DI container of one feature, whose outputs (a view, a model …) the
/// parent feature uses. Here it also names the parts that make up the feature.
protocol FeatureGraph: AnyObject {
    /// The feature's objects that must go when the feature goes, with their roles.
    var parts: [(object: AnyObject, role: ObjectRole)] { get }
    /// Called once the feature is in the tree: show its first child features here.
    func didAttach(as node: NodeID)
}

extension FeatureGraph {
    func didAttach(as node: NodeID) {}
}

/// Where the feature tree meets Nodescope, through the generic tracking API: each feature is a
/// node of kind `Feature`, named after its graph, holding its graph and its parts. Nodescope
/// watches them through weak references and reports any that outlives the feature's removal.
/// Both `attach` functions take their caller's `#filePath` and `#line` and pass them to
/// `tracker.attach`, so a report points at the router's line that showed the feature, not at
/// this file.
enum FeatureTree {
    /// Reports `graph` as a feature under `parent` (nil for the app), then lets it start.
    @discardableResult
    static func attach(
        _ graph: FeatureGraph, under parent: NodeID?, file: StaticString = #filePath, line: UInt = #line
    ) -> NodeID {
        let tracker = NodeTracker.shared
        let id = tracker.attach(
            graph, role: "graph", parent: parent, kind: .feature, name: name(of: graph), file: file, line: line)
        for (object, role) in graph.parts { tracker.watch(object, role: role, in: id) }
        tracker.setState(.active, of: id)
        graph.didAttach(as: id)
        return id
    }

    /// Reports a feature that is a single view (the seed's case where a graph would be
    /// redundant): the view is the whole feature.
    @discardableResult
    static func attach(
        screen view: AnyObject, name: String, under parent: NodeID?, file: StaticString = #filePath,
        line: UInt = #line
    ) -> NodeID {
        let id = NodeTracker.shared.attach(
            view, role: .view, parent: parent, kind: .feature, name: name, file: file, line: line)
        NodeTracker.shared.setState(.active, of: id)
        return id
    }

    /// Reports a feature removed: from now on, each of its objects must be released.
    static func detach(_ node: NodeID) {
        NodeTracker.shared.detach(node)
    }

    /// `WordDetailsGraphImpl` reads as `WordDetailsGraph`.
    private static func name(of graph: FeatureGraph) -> String {
        let name = "\(type(of: graph))"
        return name.hasSuffix("Impl") ? String(name.dropLast(4)) : name
    }
}
