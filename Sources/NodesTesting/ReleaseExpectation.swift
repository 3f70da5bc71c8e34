/// Expects objects to be released within a grace: a real-time check for tests, in any test
/// framework (it returns a ``ReleaseVerdict``; assert on it with `#expect` or `XCTAssert`).
///
/// It holds the objects only weakly. Create it while the test still has the objects, let go of
/// them (detach the node, drop the locals), then ask for the ``verdict(within:)``:
///
/// ```swift
/// let expectation = ReleaseExpectation(node: profile)   // flow, context, workers, view
/// root.detach(ending: profile)
/// profile = nil
/// let verdict = await expectation.verdict()
/// #expect(verdict.isReleased, "\(verdict)")
/// ```
///
/// The free functions ``expectReleased(_:within:named:)``, ``expectReleased(named:within:_:)``
/// and ``expectNodeReleased(_:within:named:)`` do the same in one call.
public final class ReleaseExpectation: Sendable {
    private struct Watched: Sendable {
        var reference: WeakReference
        var object: ReleaseVerdict.AliveObject
    }

    /// What is watched, as the test names it in verdicts.
    public let name: String
    private let watched: [Watched]

    /// Watches `objects` weakly. An object that reports to a ``NodeTracker`` (the runtime's
    /// flows, contexts, workers and views) is described with its role and node from the
    /// tracker's tree; others by their type name.
    public convenience init(named name: String, watching objects: [AnyObject]) {
        self.init(name: name, objects: objects.map { ($0, nil) }, node: nil)
    }

    /// Watches the objects of a flow's node: the flow, its context, the context's workers and
    /// its view (those that are objects), named after the node unless `name` is given.
    @MainActor
    public convenience init<ContextType, ViewType>(node flow: AbstractFlow<ContextType, ViewType>, named name: String? = nil) {
        var objects: [(AnyObject, String?)] = [(flow, "flow")]
        let context = flow.context
        if Self.isObject(context) {
            let contextObject = context as AnyObject
            if contextObject !== flow { objects.append((contextObject, "context")) }
            for worker in (contextObject as? ReleaseExpectationWorkerListing)?.listedWorkers ?? [] {
                objects.append((worker, "worker"))
            }
        }
        let view = flow.viewController
        if Self.isObject(view) {
            let viewObject = view as AnyObject
            if !objects.contains(where: { $0.0 === viewObject }) { objects.append((viewObject, "view")) }
        }
        self.init(name: name ?? flow.nodeName, objects: objects, node: flow.nodeName)
    }

    private init(name: String, objects: [(object: AnyObject, role: String?)], node: String?) {
        self.name = name
        var snapshots: [ObjectIdentifier: TreeSnapshot] = [:]
        watched = objects.map { object, role in
            var description = ReleaseVerdict.AliveObject(typeName: String(describing: type(of: object)), role: role, node: node)
            if let handle = (object as? TrackedObject)?.trackingHandle {
                let key = ObjectIdentifier(handle.tracker)
                let snapshot = snapshots[key] ?? handle.tracker.snapshot()
                snapshots[key] = snapshot
                if let tracked = snapshot.node(handle.node) {
                    description.node = tracked.name
                    description.role = tracked.objects.first { $0.index == handle.index }?.role.rawValue ?? role
                }
            }
            return Watched(reference: WeakReference(object), object: description)
        }
    }

    /// How many objects are watched.
    public var watchedCount: Int { watched.count }

    /// The verdict right now, without waiting.
    public func currentVerdict(waited: Duration = .zero, grace: Duration = .zero) -> ReleaseVerdict {
        ReleaseVerdict(
            name: name, watchedCount: watched.count, alive: watched.filter { !$0.reference.isReleased }.map(\.object),
            waited: waited, grace: grace)
    }

    /// Waits until every watched object is released, or the grace runs out, checking every few
    /// milliseconds, and returns the verdict.
    public func verdict(within grace: Duration = .seconds(1)) async -> ReleaseVerdict {
        let clock = ContinuousClock()
        let start = clock.now
        while true {
            let waited = clock.now - start
            let verdict = currentVerdict(waited: waited, grace: grace)
            if verdict.isReleased || waited >= grace { return verdict }
            try? await Task.sleep(for: min(.milliseconds(5), grace - waited))
        }
    }

    private static func isObject(_ value: Any) -> Bool {
        Mirror(reflecting: value).displayStyle == .class
    }
}

/// Gives ``ReleaseExpectation`` the workers of a context.
@MainActor
protocol ReleaseExpectationWorkerListing {
    var listedWorkers: [Worker] { get }
}

extension AbstractContext: ReleaseExpectationWorkerListing {
    var listedWorkers: [Worker] { workers }
}

/// Waits (at most `grace`) for `objects` to be released and returns the verdict.
///
/// Nothing else may hold the objects while it waits, the caller's locals included: build the
/// array with `consume` (`[consume flow, consume context]`), or use
/// ``expectReleased(named:within:_:)``, whose closure hands the objects over.
public func expectReleased(
    _ objects: consuming [AnyObject], within grace: Duration = .seconds(1), named name: String
) async -> ReleaseVerdict {
    let expectation = ReleaseExpectation(named: name, watching: objects)
    return await expectation.verdict(within: grace)
}

/// Runs `release` (which detaches a node, say, and returns the objects that should now go),
/// then waits (at most `grace`) for those objects to be released, and returns the verdict.
///
/// ```swift
/// let verdict = await expectReleased(named: "ProfileFlow") {
///     let profile = root.firstSubFlow(ofType: ProfileFlowImp.self)!
///     root.detach(ending: profile)
///     return [profile, profile.context]
/// }
/// #expect(verdict.isReleased, "\(verdict)")
/// ```
public func expectReleased(
    named name: String, within grace: Duration = .seconds(1), isolation: isolated (any Actor)? = #isolation,
    _ release: () -> [AnyObject]
) async -> ReleaseVerdict {
    let expectation = ReleaseExpectation(named: name, watching: release())
    return await expectation.verdict(within: grace)
}

/// Waits (at most `grace`) for a flow's node to be released: the flow, its context, the
/// context's workers and its view. Pass the flow with `consume`, so that the caller's reference
/// is gone: `await expectNodeReleased(consume profile)`.
@MainActor
public func expectNodeReleased<ContextType, ViewType>(
    _ flow: consuming AbstractFlow<ContextType, ViewType>, within grace: Duration = .seconds(1), named name: String? = nil
) async -> ReleaseVerdict {
    let expectation = ReleaseExpectation(node: flow, named: name)
    return await expectation.verdict(within: grace)
}
