/// Keeps a flow's sub-flows: attach starts a child, detach ends it, and ending the parent ends
/// every child, last-attached first.
struct FlowController {
    private(set) var flows: [Flow] = []

    mutating func attach(
        starting flow: Flow, under parent: TrackingHandle?, leakDetector: LeakDetector?, site: AttachSite?
    ) -> Bool {
        guard !flows.contains(where: { $0 === flow }) else { return false }
        flows.append(flow)
        (flow as? NodeRegistering)?.registerNode(under: parent, leakDetector: leakDetector, site: site)
        flow._start()
        return true
    }

    mutating func detach(ending flow: Flow) -> Bool {
        guard let index = flows.firstIndex(where: { $0 === flow }) else { return false }
        flow._end()
        flows.remove(at: index)
        (flow as? NodeRegistering)?.unregisterNode()
        return true
    }

    /// Ends every sub-flow in reverse order of attach; returns them.
    mutating func detachAll() -> [Flow] {
        let ended = flows.reversed().filter { detach(ending: $0) }
        return ended
    }

    func first<T>(ofType type: T.Type) -> T? {
        flows.lazy.compactMap { $0 as? T }.first
    }

    func all<T>(ofType type: T.Type) -> [T] {
        flows.compactMap { $0 as? T }
    }
}

/// Registers a flow's node with its tracker when it is attached, and detaches it when it is.
protocol NodeRegistering: AnyObject {
    func registerNode(under parent: TrackingHandle?, leakDetector: LeakDetector?, site: AttachSite?)
    /// Registers a flow as a root before it starts, with the site of the app's launch call.
    func registerRoot(at site: AttachSite)
    func unregisterNode()
}
