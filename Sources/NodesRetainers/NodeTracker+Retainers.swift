import NodesTracking
import NodescopeWire

extension NodeTracker {
    /// Explains what holds the alive objects of the detached nodes detached at or before
    /// `detachedBy` (host monotonic nanoseconds), oldest first, as many as one call of `analysis`
    /// takes: one frame per object. Each node is explained once: a later call skips it.
    ///
    /// The agent does this itself, on its own thread, when a node's grace runs out; this is for
    /// tools, tests and benchmarks. Call it from a thread whose stack holds no reference that
    /// should count (its own stack is left out of the analysis).
    ///
    /// `boundNanos`, when given, bounds the analysis's time more tightly than its limits (the
    /// agent's exit settlement uses what is left of its exit flush). `stacksFirst` searches
    /// threads' stacks and tasks before cycles, as settling a node still within its grace needs
    /// (``RetainerAnalysis/explain(_:attached:detached:countingAgainstBudget:boundNanos:stacksFirst:)``);
    /// by default, when a bound is given.
    package func explainLeaks(
        detachedBy: UInt64, with analysis: RetainerAnalysis, boundNanos: UInt64? = nil, stacksFirst: Bool? = nil
    ) -> [RetainersFrame] {
        let query = retainerQuery(detachedBy: detachedBy, maxObjects: analysis.limits.objectsPerBatch)
        guard !query.targets.isEmpty else { return [] }
        return analysis.explain(
            query.targets, attached: query.attached, detached: query.detached, boundNanos: boundNanos,
            stacksFirst: stacksFirst ?? (boundNanos != nil))
    }

    /// Explains what holds the alive objects of those of `nodes` that are detached, now,
    /// whether or not their grace has run out (the collector asked, or a test asserts): one frame per object. It
    /// does not count against the process's budget of analyses, and a leak among them is still
    /// explained on its own when its grace runs out.
    ///
    /// Call it from a thread whose stack holds no reference that should count.
    package func explain(_ nodes: [NodeID], with analysis: RetainerAnalysis) -> ([RetainersFrame], ExplainOutcome) {
        #if os(Linux)
        let query = RetainerQuery(explaining: Set(nodes), in: currentRegistry())
        guard !query.targets.isEmpty else { return ([], .nothingAlive) }
        let frames = analysis.explain(
            query.targets, attached: query.attached, detached: query.detached, countingAgainstBudget: false)
        return (frames, .explained)
        #else
        return ([], .unavailable)
        #endif
    }

    /// What a retainer analysis needs to explain the detached nodes detached at or before
    /// `detachedBy` that still have objects alive (at most about `maxObjects` objects, oldest
    /// nodes first): their alive objects (the targets), the objects of attached nodes (the
    /// roots), and the alive objects of every detached node (the leaking set). The nodes taken
    /// count as explained from now on, so that each is explained once.
    ///
    /// Every address in it is obfuscated: the lists are in memory when the analysis copies it.
    func retainerQuery(detachedBy: UInt64, maxObjects: Int) -> RetainerQuery {
        let (nodes, registry) = takeUnexplained(detachedBy: detachedBy, maxObjects: maxObjects)
        guard let registry else { return RetainerQuery() }
        return RetainerQuery(explaining: Set(nodes), in: registry)
    }
}
