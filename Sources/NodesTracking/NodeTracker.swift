import Synchronization

/// The generic tracking API: the one place where a node tree is reported, by the Nodes runtime
/// and by any other architecture (RIBs, VIPER, Builder-Feature-Graph, event modules).
///
/// A tracker keeps the current tree (attached nodes, and detached nodes whose objects are still
/// alive), numbers every change, and hands each one to its sinks. While it is not recording,
/// every call returns after one branch.
///
/// ```swift
/// let tracker = NodeTracker.current
/// let id = tracker.attach(router, role: .router, parent: parentID, kind: .router)
/// tracker.watch(interactor, role: .interactor, in: id)
/// tracker.setState(.active, of: id)
/// tracker.detach(id)
/// ```
///
/// Thread safety: every method may be called from any thread. Sinks are called in sequence
/// order under the tracker's lock.
///
/// What the app's thread pays: while the only sink is the agent (or there is none), a state
/// change, a detach, a release and the runtime's attach (``attach(_:role:parts:parent:kind:name:site:)``)
/// only append a fixed-size entry to an ``EventLog``; whoever next holds the lock (the agent's
/// writer thread, a reader such as ``snapshot()``, or a producer that finds the log full)
/// applies the entries to the registry and hands the events to the sinks, in order. Every
/// reading method applies what was recorded before it, so it sees every change made before the
/// call. Other sinks (a test's recording) are called synchronously, as they always were.
public final class NodeTracker: Sendable {
    // The process-wide tracker (`shared`) and the task's tracker (`current`) are declared by
    // NodesDebug, which starts the agent: this module does not know the agent.

    /// The units of the shared tracker's log, which the agent's writer drains: a burst of about
    /// 3,800 node cycles of the runtime (17 units each: 2 MiB, taken as the ring first goes
    /// round). Other trackers (a test's) have no writer: they apply their changes themselves,
    /// and take ``logCapacity`` (128 KiB).
    package static let sharedLogCapacity = 65_536
    /// The units of another tracker's log.
    package static let logCapacity = 4_096

    private struct State {
        /// Copied only through its `readingCopy()`: see `holdTablesAlone()`.
        var registry: NodeRegistry = {
            var registry = NodeRegistry()
            registry.holdTablesAlone()
            return registry
        }()
        var sequence: UInt64 = 0
        var sinks: [any DebugSink] = []
        /// Every test that nodes were attached under, in order, for snapshots: a collector that
        /// connects late still learns of the tests that ran before (at most ``maxTests``).
        var tests: [TestIdentity] = []
        var testIDs: Set<UInt64> = []
        /// While the log's consumer (the agent's writer) applies the log itself
        /// (``applyRecorded(for:into:encoding:maximum:)``): its feed, whose events go straight to
        /// it, encoded as they are made (``straight``) or as events into its batch
        /// (``directEvents``).
        var directFeed: (any LogConsumer)?
        /// Whether ``directFeed`` wants events, read once a round: its consumer, the only one
        /// to change it, is the thread applying the round.
        var directFeedWantsEvents = false
        /// The events let go while ``directFeed`` wanted none (see
        /// ``applyRecordedDiscarding(for:maximum:)``).
        var discardedEvents: UInt64 = 0
        var straight: (any AppliedChangeEncoder)?
        var directEvents: [DebugInformation] = []
        /// The only sink, when it is a log's consumer (the agent's feed): the events made for it
        /// are handed over without a copy (``LogConsumer/receiveMade(_:)``).
        var soleConsumer: (any LogConsumer)?
        /// Reused by each detach applied from the log, for the ids it detached.
        var detachOrder: [NodeID] = []
    }

    /// The most tests a tracker remembers for its snapshots.
    static let maxTests = 100_000

    // The fields are grouped by who writes them, so that what the app's thread reads on every
    // change sits on cache lines that nobody writes while recording (see ``CacheLinePadding``):
    // first the object's header alone (the app's threads retain and release the tracker with
    // every object that reports its release: a line that the writer's lock shared would go back
    // and forth between the cores on each of them); then the locks and what they guard; then the
    // read-mostly group; then the writer's idle flag.
    private let headerPadding = CacheLinePadding()
    private let state = Mutex(State())
    private let consumerToWake = Mutex<(any LogConsumer)?>(nil)
    private let poller = ReleasePoller()
    private let lockPadding = CacheLinePadding()
    private let recording = Atomic<Bool>(false)
    /// Whether a sink other than the agent's is registered: then every change is applied and
    /// handed to the sinks on the calling thread.
    private let sinksAreSynchronous = Atomic<Bool>(false)
    /// The changes recorded but not yet applied to the registry.
    private let log: EventLog
    private let readMostlyPadding = CacheLinePadding()
    /// Set by the consumer (the agent's writer) while it sleeps for want of work: the next
    /// change wakes it (``LogConsumer/wakeUp()``).
    package let consumerIdle = Atomic<Bool>(false)
    private let idlePadding = CacheLinePadding()

    /// Creates a tracker that is not recording.
    public convenience init() {
        self.init(logCapacity: Self.logCapacity)
    }

    /// Whether the tracker lives as long as the process (the process-wide one): the objects
    /// registered with it then refer to it without a reference count.
    let livesForever: Bool

    /// A tracker whose log has `logCapacity` units (the agent's tracker has a large one);
    /// `livesForever` for the process-wide tracker only, which must never be freed.
    package init(logCapacity: Int, livesForever: Bool = false) {
        log = EventLog(capacity: logCapacity)
        self.livesForever = livesForever
    }

    deinit {
        poller.stop()
    }

    // MARK: Recording and sinks

    /// Whether changes are being recorded. When false, every reporting call is one branch.
    @inline(__always)
    public var isRecording: Bool { recording.load(ordering: .relaxed) }

    /// Starts keeping the tree. Nodes attached before this call are not known.
    public func startRecording() {
        recording.store(true, ordering: .releasing)
    }

    /// Adds a sink and starts recording.
    public func addSink(_ sink: any DebugSink) {
        withApplied { state in
            state.sinks.append(sink)
            sinksAreSynchronous.store(state.sinks.contains { !($0 is any LogConsumer) }, ordering: .releasing)
            state.soleConsumer = state.sinks.count == 1 ? state.sinks[0] as? any LogConsumer : nil
        }
        startRecording()
    }

    /// Removes a sink added before.
    public func removeSink(_ sink: any DebugSink) {
        withApplied { state in
            state.sinks.removeAll { $0 === sink }
            sinksAreSynchronous.store(state.sinks.contains { !($0 is any LogConsumer) }, ordering: .releasing)
            state.soleConsumer = state.sinks.count == 1 ? state.sinks[0] as? any LogConsumer : nil
        }
    }

    /// Sets the consumer of the log (the agent's writer) that a change wakes when it sleeps idle.
    package func setConsumerToWake(_ consumer: (any LogConsumer)?) {
        consumerToWake.withLock { $0 = consumer }
    }

    /// Whether changes were recorded that have not been applied yet.
    package var hasUnappliedChanges: Bool { log.hasReserved }

    /// How much of the log waits to be applied, in units (a release or a state change takes
    /// one, the runtime's attach eight).
    package var unappliedUnits: Int { log.backlog }

    /// What the agent's writer calls each round: applies the changes recorded so far (about
    /// `maximum` units of the log at most), and returns how many events the feed's queue
    /// dropped and whether `maximum` left changes behind.
    ///
    /// The events of changes that other threads applied (a reader, an app thread that found the
    /// log full) wait in `feed`'s queue; the events of the changes applied here skip it, which
    /// would cost each two more copies, into a ring large enough to hold a slow collector's
    /// backlog and so cold in the cache. With `encoding` (a connection streaming deltas), `feed`
    /// the only sink and nothing dropped, all of them, queued first, are handed to `encoding` as
    /// they are made; otherwise they are appended to `batch`, queued first.
    package func applyRecorded(
        for feed: any LogConsumer, into batch: inout [DebugInformation], encoding: (any AppliedChangeEncoder)?,
        maximum: Int = .max
    ) -> (dropped: UInt64, backlog: Bool) {
        let (dropped, applied) = state.withLock { state in
            applyDirectly(for: feed, into: &batch, encoding: encoding, through: nil, maximum: maximum, to: &state)
        }
        if applied.wakePoller { poller.wake(self) }
        return (dropped, applied.backlog)
    }

    /// The body of ``applyRecorded(for:into:encoding:maximum:)``, under the lock, through `end`
    /// (see ``withApplied(through:_:)``) when given.
    private func applyDirectly(
        for feed: any LogConsumer, into batch: inout [DebugInformation], encoding: (any AppliedChangeEncoder)?,
        through end: UInt64?, maximum: Int, to state: inout State
    ) -> (dropped: UInt64, applied: (wakePoller: Bool, backlog: Bool)) {
        // Under the lock: the queue's producer (whoever applies changes) holds it too.
        let alone = state.sinks.count == 1 && state.sinks[0] === feed
        let dropped: UInt64
        if alone, let encoding {
            // Each queued event moved out and encoded, with no copy (its strings retained and
            // released again) to hand it over.
            dropped = feed.takeQueued(into: &batch, encoding: encoding)
            if dropped == 0 { state.straight = encoding }
        } else {
            dropped = feed.takeQueued(into: &batch)
        }
        state.directFeed = feed
        state.directFeedWantsEvents = feed.wantsEvents
        swap(&state.directEvents, &batch)
        let applied = applyLogSlice(through: end, maximum: maximum, to: &state)
        swap(&state.directEvents, &batch)
        state.straight = nil
        state.directFeed = nil
        return (dropped, applied)
    }

    /// What the agent's writer calls when its connection cannot take more (the collector stopped
    /// reading) and the log fills up: applies the changes recorded so far (about `maximum` units
    /// at most) without making their events, and returns how many events it let go and whether
    /// `maximum` left changes behind. The writer counts them as dropped, so that the stream
    /// starts again from a snapshot; meanwhile the app's threads keep appending to a log that
    /// has room, rather than apply it themselves.
    package func applyRecordedDiscarding(for feed: any LogConsumer, maximum: Int) -> (discarded: UInt64, backlog: Bool) {
        let (discarded, applied) = state.withLock { state in
            state.directFeed = feed
            state.directFeedWantsEvents = false
            state.discardedEvents = 0
            let applied = applyLogSlice(through: nil, maximum: maximum, to: &state)
            let discarded = state.discardedEvents
            state.directFeed = nil
            return (discarded, applied)
        }
        if applied.wakePoller { poller.wake(self) }
        return (discarded, applied.backlog)
    }

    /// The units of the log.
    package var logCapacity: Int { log.capacity }

    /// How many units of the log are recorded and not applied yet (without applying them).
    package var logBacklog: Int { log.backlog }

    // MARK: Reporting

    /// Attaches a new node whose principal object is `object` under `parent` (`nil` for a root).
    /// The principal object becomes object 0 of the node and is watched for release.
    ///
    /// - Parameters:
    ///   - name: how the node reads in a tree; the object's type name when nil.
    ///   - findableByObject: whether ``node(for:)`` (and so `attach(_:role:under:…)`) can find
    ///     the node from its principal object; it costs a weak reference, which the runtime,
    ///     knowing its ids, does without.
    ///   - file, line: the attach site, the caller's by default (no cost at run time); reports
    ///     show it as `ProfileFlow.swift:42`.
    /// - Returns: the new node's id (a fresh id even when not recording).
    ///
    /// The node also carries the ``TestIdentity`` bound to the calling task, if any.
    @discardableResult
    public func attach(
        _ object: AnyObject, role: ObjectRole, parent: NodeID?, kind: NodeKind, name: String? = nil,
        findableByObject: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) -> NodeID {
        attachNode(
            object, reporter: Self.reporter(of: object), role: role, parent: parent, kind: kind, name: name,
            findableByObject: findableByObject, site: AttachSite(file: file, line: line))
    }

    /// ``attach(_:role:parent:kind:name:findableByObject:file:line:)`` for an object that reports its
    /// own release, without a dynamic cast.
    @discardableResult
    public func attach(
        _ object: TrackedObjectBase, role: ObjectRole, parent: NodeID?, kind: NodeKind, name: String? = nil,
        findableByObject: Bool = true, file: StaticString = #filePath, line: UInt = #line
    ) -> NodeID {
        attachNode(
            object, reporter: object, role: role, parent: parent, kind: kind, name: name,
            findableByObject: findableByObject, site: AttachSite(file: file, line: line))
    }

    /// ``attach(_:role:parent:kind:name:findableByObject:file:line:)`` with the site given as a
    /// value: for a runtime whose own attach call took its caller's `#filePath` and `#line`
    /// (`nil` when unknown).
    @discardableResult
    public func attach(
        _ object: TrackedObjectBase, role: ObjectRole, parent: NodeID?, kind: NodeKind, name: String? = nil,
        findableByObject: Bool = true, site: AttachSite?
    ) -> NodeID {
        attachNode(
            object, reporter: object, role: role, parent: parent, kind: kind, name: name,
            findableByObject: findableByObject, site: site)
    }

    /// One object of a node that the runtime registers together with its attach.
    public struct Part {
        /// The object, which reports its own release.
        public let object: TrackedObjectBase
        /// Its role in the node.
        public let role: ObjectRole

        /// A part.
        public init(object: TrackedObjectBase, role: ObjectRole) {
            self.object = object
            self.role = role
        }
    }

    /// Attaches a new node whose principal object is `object` together with its other objects
    /// (`parts`, objects 1, 2, …), all of which report their own release: the runtime's attach,
    /// which costs the calling thread one append of a few fixed-size entries. The node cannot
    /// be found by its object (see ``node(for:)``).
    @discardableResult
    public func attach(
        _ object: TrackedObjectBase, role: ObjectRole, parts: [Part], parent: NodeID?, kind: NodeKind, name: String?,
        site: AttachSite?
    ) -> NodeID {
        let id = NodeID.next()
        guard isRecording else { return id }
        let origin = NodeOrigin(site: site, test: TestIdentity.currentIfAny)
        if !sinksAreSynchronous.load(ordering: .relaxed), parts.count < EventLog.maxObjects,
            claim(object, parts, for: id)
        {
            if let reservation = reserve(EventLog.attachUnits(objects: parts.count + 1)) {
                let ticket = reservation.ticket
                let time = MonotonicClock.now()
                let type = Swift.type(of: object)
                log.initialize(
                    AttachDetails(type: type, parent: parent, kind: kind, name: name, origin: origin), at: ticket)
                log.initialize(
                    ObjectRecord(type: type, address: ObfuscatedAddress(object), role: role), number: 0, at: ticket)
                for (offset, part) in parts.enumerated() {
                    log.initialize(
                        ObjectRecord(
                            type: Swift.type(of: part.object), address: ObfuscatedAddress(part.object), role: part.role),
                        number: offset + 1, at: ticket)
                }
                log.publish(LogEntry(operation: .attach, index: UInt16(parts.count + 1), node: id, time: time), at: ticket)
                wakeConsumer(reservation)
                return id
            }
            Self.unclaim(object, parts[...])
        }
        attachLocked(object, id: id, role: role, parts: parts, parent: parent, kind: kind, name: name, origin: origin)
        return id
    }

    @inline(never)
    private func attachLocked(
        _ object: TrackedObjectBase, id: NodeID, role: ObjectRole, parts: [Part], parent: NodeID?, kind: NodeKind,
        name: String?, origin: NodeOrigin
    ) {
        _ = attachNode(
            object, id: id, reporter: object, role: role, parent: parent, kind: kind, name: name,
            findableByObject: false, site: origin.site, origin: origin)
        for part in parts where part.object !== object { watch(part.object, role: part.role, in: id) }
    }

    /// Gives each object a handle of the new node `id` if none is registered yet and they are
    /// distinct (an object met twice has the handle given the first time); otherwise takes back
    /// the handles given and returns false (the locked path then decides who watches what). One
    /// pass: testing the objects' distinctness pair by pair cost more than the rest.
    ///
    /// The handles are given before the attach's units are reserved. A report made through one
    /// from another thread before the attach returns could then be ordered before the attach in
    /// the log; but such a report reads the object's handle while this thread writes it, which
    /// is a data race of the caller's whatever the order.
    private func claim(_ object: TrackedObjectBase, _ parts: [Part], for id: NodeID) -> Bool {
        guard object.trackingHandle == nil else { return false }
        object.trackingHandle = TrackingHandle(tracker: self, node: id, index: 0)
        for (offset, part) in parts.enumerated() {
            guard part.object.trackingHandle == nil else {
                Self.unclaim(object, parts[..<offset])
                return false
            }
            part.object.trackingHandle = TrackingHandle(tracker: self, node: id, index: UInt16(offset + 1))
        }
        return true
    }

    /// Takes back the handles that ``claim(_:_:for:)`` gave.
    private static func unclaim(_ object: TrackedObjectBase, _ parts: ArraySlice<Part>) {
        for part in parts.reversed() {
            part.object.trackingHandle?.relinquish()
            part.object.trackingHandle = nil
        }
        object.trackingHandle?.relinquish()
        object.trackingHandle = nil
    }

    /// Attaches a new node under the node whose principal object is `parentObject`.
    @discardableResult
    public func attach(
        _ object: AnyObject, role: ObjectRole, under parentObject: AnyObject?, kind: NodeKind, name: String? = nil,
        file: StaticString = #filePath, line: UInt = #line
    ) -> NodeID {
        attach(object, role: role, parent: parentObject.flatMap(node(for:)), kind: kind, name: name, file: file, line: line)
    }

    /// Watches `object` as one of the objects of `node`, so that its release is reported.
    /// Objects that adopt ``TrackedObject`` report from `deinit`; others are polled through
    /// a weak reference after the node is detached.
    public func watch(_ object: AnyObject, role: ObjectRole, in node: NodeID) {
        guard isRecording else { return }
        add(object, reporter: Self.reporter(of: object), role: role, in: node)
    }

    /// ``watch(_:role:in:)`` for an object that reports its own release, without a dynamic cast.
    public func watch(_ object: TrackedObjectBase, role: ObjectRole, in node: NodeID) {
        guard isRecording else { return }
        add(object, reporter: object, role: role, in: node)
    }

    private static func reporter(of object: AnyObject) -> TrackedObject? {
        (object as? TrackedObjectBase) ?? (object as? TrackedObject)
    }

    private func attachNode(
        _ object: AnyObject, id: NodeID = .next(), reporter: TrackedObject?, role: ObjectRole, parent: NodeID?,
        kind: NodeKind, name: String?, findableByObject: Bool, site: AttachSite?, origin knownOrigin: NodeOrigin? = nil
    ) -> NodeID {
        guard isRecording else { return id }
        let principal = findableByObject ? WeakReference(object) : nil
        let origin = knownOrigin ?? NodeOrigin(site: site, test: TestIdentity.currentIfAny)
        withApplied { state in
            let nodeName = name ?? TypeNameCache.shared.name(of: Swift.type(of: object))
            let change = state.registry.attach(
                id, parent: parent, kind: kind, name: nodeName, time: MonotonicClock.now(), principal: principal,
                origin: origin)
            Self.noteTest(origin.test, in: &state)
            emit(change, for: id, origin: origin, in: &state)
        }
        add(object, reporter: reporter, role: role, in: id)
        return id
    }

    private func add(_ object: AnyObject, reporter: TrackedObject?, role: ObjectRole, in node: NodeID) {
        // An object already reporting for another live registration is watched weakly here.
        let owner = reporter?.trackingHandle
        let weak = reporter == nil || owner != nil ? WeakReference(object) : nil
        let address = ObfuscatedAddress(object)
        let typeName = TypeNameCache.shared.name(of: Swift.type(of: object))
        let index: UInt16? = withApplied { state in
            let ownedElsewhere = owner.map { $0.tracker === self && state.registry.contains($0.node) } ?? false
            let usesHandle = reporter != nil && !ownedElsewhere
            guard
                let index = state.registry.addObject(
                    to: node, role: role, typeName: typeName, weak: usesHandle ? nil : weak, address: address)
            else { return nil }
            emit(.objectAdded(index: index, role: role, typeName: typeName), for: node, in: &state)
            return usesHandle ? index : nil
        }
        if let index, let reporter {
            reporter.trackingHandle = TrackingHandle(tracker: self, node: node, index: index)
            // The handle it replaces (the object's node is gone, or was another tracker's).
            owner?.relinquish()
        }
    }

    /// The display name of an object's type, cached per type (demangling is slow).
    public func typeName(of object: AnyObject) -> String {
        TypeNameCache.shared.name(of: Swift.type(of: object))
    }

    /// The name a node whose principal object is `object` takes by default: the object's type
    /// name without a trailing `Imp` (the convention for implementation classes), made once per
    /// type.
    public func nodeName(of object: AnyObject) -> String {
        TypeNameCache.nodeNames.name(of: Swift.type(of: object))
    }

    /// Records a lifecycle state of `node`.
    public func setState(_ newState: NodeState, of node: NodeID) {
        guard isRecording else { return }
        if record(LogEntry(operation: .state, state: newState, node: node, time: 0), coarse: true) { return }
        setStateLocked(newState, of: node)
    }

    // The locked paths of the changes recorded most often, in functions of their own: inlined,
    // their event's locals made the common path save every register and set up a stack
    // protector on each change.

    @inline(never)
    private func setStateLocked(_ newState: NodeState, of node: NodeID) {
        withApplied { state in
            guard state.registry.setState(newState, of: node) != nil else { return }
            emit(.stateChanged(newState), for: node, in: &state)
        }
    }

    /// Detaches `node` (and any descendant still attached). From now on each of its objects is
    /// expected to be released.
    public func detach(_ node: NodeID) {
        guard isRecording else { return }
        if record(LogEntry(operation: .detach, node: node, time: 0)) { return }
        detachLocked(node)
    }

    @inline(never)
    private func detachLocked(_ node: NodeID) {
        let hasPending = withApplied { state in
            for id in state.registry.detach(node, time: MonotonicClock.now()) {
                emit(.detached, for: id, in: &state)
            }
            return !state.registry.pending.isEmpty
        }
        if hasPending { poller.wake(self) }
    }

    /// Detaches the node whose principal object is `object`.
    public func detach(_ object: AnyObject) {
        guard isRecording, let node = node(for: object) else { return }
        detach(node)
    }

    /// The live node whose principal object is `object`.
    public func node(for object: AnyObject) -> NodeID? {
        guard isRecording else { return nil }
        let key = ObfuscatedAddress(object)
        guard let entry = withApplied({ $0.registry.principal(key) }), entry.object.refers(to: object) else {
            return nil
        }
        return entry.node
    }

    /// Records that object `index` of `node` was deallocated. ``TrackingHandle`` calls this.
    func objectReleased(node: NodeID, index: UInt16) {
        guard isRecording else { return }
        if record(LogEntry(operation: .release, index: index, node: node, time: 0)) { return }
        objectReleasedLocked(node: node, index: index)
    }

    @inline(never)
    private func objectReleasedLocked(node: NodeID, index: UInt16) {
        withApplied { state in
            guard let (role, typeName) = state.registry.release(node, index: index) else { return }
            emit(.released(index: index, role: role, typeName: typeName), for: node, in: &state)
        }
    }

    // MARK: Reading

    /// The whole current tree, consistent with every event up to its `sequence`.
    public func snapshot() -> TreeSnapshot {
        _ = pollReleases()
        // Only a copy of the registry (references to its buffers) is taken under the lock;
        // sorting and building the snapshot (most of the work on a big tree) happen without
        // holding up the app.
        let (registry, sequence, tests) = withApplied { ($0.registry.readingCopy(), $0.sequence, $0.tests) }
        return TreeSnapshot(sequence: sequence, nodes: registry.snapshotNodes(), tests: tests)
    }

    /// The sequence number of the latest event.
    public var currentSequence: UInt64 {
        withApplied { $0.sequence }
    }

    /// Detached nodes that still have live objects, with their detach times (host monotonic ns).
    public func detachedAwaitingRelease() -> [(node: NodeID, detachedAt: UInt64)] {
        _ = pollReleases()
        return withApplied { $0.registry.detachedAlive() }
    }

    /// Checks weak-watched objects of detached nodes now, emitting a release for each one gone.
    /// Returns how many are still pending. The poller thread calls this periodically.
    @discardableResult
    public func pollReleases() -> Int {
        pollReleasesWithHorizon().pending
    }

    /// Polls the weak-watched objects like ``pollReleases()`` and returns the time up to which
    /// the tracker's events are complete: every release that happened at or before `horizon`
    /// (noticed by `deinit` or by this poll) has been emitted by the time this returns.
    ///
    /// The agent sends it as its heartbeat, the watermark by which the collector judges graces:
    /// the time is read under the lock, so every event stamped before it is already out, and
    /// the weak references are checked after it, so no earlier release stays unnoticed.
    ///
    /// It also returns the detach time of the earliest detached node with an object alive whose
    /// holders have not been explained (see ``retainerQuery(detachedBy:maxObjects:)``).
    package func pollReleasesWithHorizon() -> (pending: Int, horizon: UInt64, oldestUnexplained: UInt64?) {
        var batch: [DebugInformation] = []
        let polled = pollReleases(applying: nil, into: &batch, encoding: nil)
        return (polled.pending, polled.horizon, polled.oldestUnexplained)
    }

    /// ``pollReleasesWithHorizon()`` as the log's consumer calls it: the changes that the poll
    /// applies become `feed`'s events as ``applyRecorded(for:into:encoding:maximum:)`` makes
    /// them (encoded straight with `encoding`, else appended to `batch`, the queued ones first),
    /// rather than events queued for the consumer to encode afterwards. Also returns how many
    /// events the feed's queue dropped.
    package func pollReleasesWithHorizon(
        for feed: any LogConsumer, into batch: inout [DebugInformation], encoding: (any AppliedChangeEncoder)?
    ) -> (pending: Int, horizon: UInt64, oldestUnexplained: UInt64?, dropped: UInt64) {
        pollReleases(applying: feed, into: &batch, encoding: encoding)
    }

    private func pollReleases(
        applying feed: (any LogConsumer)?, into batch: inout [DebugInformation], encoding: (any AppliedChangeEncoder)?
    ) -> (pending: Int, horizon: UInt64, oldestUnexplained: UInt64?, dropped: UInt64) {
        // The time first, then the end of what was reserved, both before applying: a change
        // reserved later reads its time later, so it is stamped after the horizon, and every
        // change reserved before is applied (waiting for one being written) before this returns.
        let horizon = MonotonicClock.now()
        let end = log.reservedEnd
        var dropped: UInt64 = 0
        let (candidates, oldest, wakePoller) = state.withLock { state in
            let wakePoller: Bool
            if let feed {
                let direct = applyDirectly(
                    for: feed, into: &batch, encoding: encoding, through: end, maximum: .max, to: &state)
                dropped = direct.dropped
                wakePoller = direct.applied.wakePoller
            } else {
                wakePoller = applyLog(through: end, to: &state)
            }
            return (state.registry.pendingReferences(), state.registry.oldestUnexplained(), wakePoller)
        }
        if wakePoller { poller.wake(self) }
        guard !candidates.isEmpty else { return (0, horizon, oldest, dropped) }
        // Outside the lock: a weak load may end an object's life, and its deinit may report.
        let gone = candidates.filter { $0.reference?.isReleased ?? true }.map(\.entry)
        let (pending, oldestUnexplained) = withApplied { state in
            // A release noticed by polling happened after the object was last seen alive, and
            // is stamped with that time: never later than the release, so a release made within
            // its grace never reads as late, however late the poll came.
            for released in state.registry.applyDeallocated(gone, pollStart: horizon) {
                emit(
                    .released(index: released.index, role: released.role, typeName: released.typeName),
                    for: released.node, at: released.time, in: &state)
            }
            return (state.registry.pending.count, state.registry.oldestUnexplained())
        }
        return (pending, horizon, oldestUnexplained, dropped)
    }

    // MARK: Retainer analysis

    /// The detach time of the earliest detached node with an object alive whose holders have
    /// not been explained.
    package func oldestUnexplained() -> UInt64? {
        withApplied { $0.registry.oldestUnexplained() }
    }

    /// Takes, as explained from now on, the detached nodes detached at or before `detachedBy`
    /// (host monotonic nanoseconds) that still have objects alive and whose holders have not
    /// been explained (at most about `maxObjects` objects, oldest nodes first), and returns them
    /// with the registry as it is now (nil when there are none: the writer asks every round, and
    /// neither an empty registry nor a copy is made then): what the retainer analysis asks
    /// about (NodesRetainers' `RetainerQuery`). Each node is taken once.
    package func takeUnexplained(detachedBy: UInt64, maxObjects: Int) -> (nodes: [NodeID], registry: NodeRegistry?) {
        withApplied { state in
            let nodes = state.registry.takeUnexplained(detachedBy: detachedBy, maxObjects: maxObjects)
            return (nodes, nodes.isEmpty ? nil : state.registry.readingCopy())
        }
    }

    /// The registry as it is now, every change recorded before the call applied (a copy: its
    /// buffers are shared until either side changes).
    package func currentRegistry() -> NodeRegistry {
        withApplied { $0.registry.readingCopy() }
    }

    // MARK: Private

    /// Records a change in the log for whoever applies it next; false when the change must be
    /// applied here (a synchronous sink is registered, or the log is full).
    @inline(__always)
    private func record(_ entry: consuming LogEntry, coarse: Bool = false) -> Bool {
        guard !sinksAreSynchronous.load(ordering: .relaxed), let reservation = reserve(1) else { return false }
        // Stamped after the reservation: see pollReleasesWithHorizon(). A state change takes the
        // coarse clock (no verdict depends on its time; it is made no earlier than the node's
        // attach when applied).
        entry.time = coarse ? MonotonicClock.coarseNow() : MonotonicClock.now()
        log.publish(entry, at: reservation.ticket)
        wakeConsumer(reservation)
        return true
    }

    /// Reserves `count` units of the log. When it is full (its consumer, the agent's writer,
    /// fell behind or was not scheduled; a tracker without an agent has none), the calling
    /// thread applies a slice of it under the lock and tries once more: a slice, not the whole
    /// log, so that the thread is soon back to its own work and a writer that runs again does
    /// the rest. Nil when the log is still full: the caller applies its change on the locked
    /// path.
    @inline(__always)
    private func reserve(_ count: Int) -> EventLog.Reservation? {
        if let reservation = log.reserve(count) { return reservation }
        return reserveAfterMakingRoom(count)
    }

    @inline(never)
    private func reserveAfterMakingRoom(_ count: Int) -> EventLog.Reservation? {
        let wakePoller = state.withLock { applyLog(through: nil, maximum: Self.roomSlice, to: &$0) }
        if wakePoller { poller.wake(self) }
        return log.reserve(count)
    }

    /// How many units a thread that finds the log full applies before trying again (a
    /// sixteenth of the agent's log: well under a millisecond of work).
    static let roomSlice = 4_096

    /// Wakes the consumer when it sleeps idle, or when the log is half full (a consumer
    /// pausing between heartbeats would otherwise let it fill up).
    @inline(__always)
    private func wakeConsumer(_ reservation: EventLog.Reservation) {
        if reservation.reachesHalf {
            wakeConsumerAtHalf()
        } else {
            wakeConsumerIfIdle()
        }
    }

    @inline(never)
    private func wakeConsumerAtHalf() {
        consumerIdle.store(false, ordering: .relaxed)
        consumerToWake.withLock { $0 }?.wakeUp()
    }

    /// Wakes the agent's writer if it sleeps for want of work. (After a reservation, which is
    /// sequentially consistent: the writer sets the flag before it looks at the log one last
    /// time, so one of the two sees the other.)
    @inline(__always)
    private func wakeConsumerIfIdle() {
        guard consumerIdle.load(ordering: .sequentiallyConsistent) else { return }
        wakeIdleConsumer()
    }

    @inline(never)
    private func wakeIdleConsumer() {
        if consumerIdle.exchange(false, ordering: .sequentiallyConsistent) {
            consumerToWake.withLock { $0 }?.wakeUp()
        }
    }

    /// Runs `body` under the lock once every change reserved before the call (before `end`, when
    /// given) is applied, waiting for those still being written.
    ///
    /// Every change reserved before, not only those published: a thread takes this path for its
    /// own change when the log is full, and another thread's change reserved ahead of it may
    /// concern the same node (its attach, reserved by the thread that made it, not yet
    /// published). Applied out of order, a release would find no node and be lost, and its node
    /// would stay in the tree for ever. A producer between its reservation and its publication
    /// holds no lock and is a bounded set of stores away, so the wait is short.
    private func withApplied<Result>(through end: UInt64? = nil, _ body: (inout State) -> Result) -> Result {
        let end = end ?? log.reservedEnd
        let (result, wakePoller) = state.withLock { state in
            let wakePoller = applyLog(through: end, to: &state)
            return (body(&state), wakePoller)
        }
        if wakePoller { poller.wake(self) }
        return result
    }

    /// Applies the logged changes; returns whether a detach left weak-watched objects to poll.
    private func applyLog(through end: UInt64?, maximum: Int = .max, to state: inout State) -> Bool {
        applyLogSlice(through: end, maximum: maximum, to: &state).wakePoller
    }

    /// ``applyLog(through:maximum:to:)``, which also tells whether `maximum` left changes behind.
    private func applyLogSlice(
        through end: UInt64?, maximum: Int, to state: inout State
    ) -> (wakePoller: Bool, backlog: Bool) {
        var detached = false
        // The log's consumer applying its own log for its feed alone, encoding as it goes.
        // Unwrapped once, not per change (binding an optional in the loop retains it each time).
        let backlog: Bool
        if state.directFeed != nil && state.directFeedWantsEvents, let straight = state.straight {
            backlog = log.drain(
                through: end, maximum: maximum,
                change: { entry in if apply(entry, encodingWith: straight, to: &state) { detached = true } },
                attach: { entry, details, objects in apply(entry, details, objects, encodingWith: straight, to: &state) })
        } else {
            backlog = log.drain(
                through: end, maximum: maximum,
                change: { entry in if apply(entry, to: &state) { detached = true } },
                attach: { entry, details, objects in apply(entry, details, objects, to: &state) })
        }
        return (detached && !state.registry.pending.isEmpty, backlog)
    }

    /// Applies one logged change as the locked path would have; returns whether it was a detach.
    private func apply(_ entry: LogEntry, to state: inout State) -> Bool {
        let (node, time) = (entry.node, entry.time)
        switch entry.operation {
        case .attach:
            return false
        case .state:
            if let attachedAt = state.registry.setState(entry.state, of: node) {
                emit(.stateChanged(entry.state), for: node, at: max(time, attachedAt), in: &state)
            }
        case .detach:
            // Emptied from its end: `removeAll(keepingCapacity:)` replaces a subrange (about
            // 60 instructions for the usual one id), and `popLast` is a call.
            while !state.detachOrder.isEmpty { state.detachOrder.removeLast() }
            state.registry.detach(node, time: time, into: &state.detachOrder)
            for id in state.detachOrder { emit(.detached, for: id, at: time, in: &state) }
            return true
        case .release:
            if let descriptor = state.registry.releaseObject(node, index: entry.index) {
                guard Self.namesAreRead(in: state) else {
                    emit(.released(index: entry.index, role: .unnamed, typeName: ""), for: node, at: time, in: &state)
                    return false
                }
                let names = state.registry.objectDescriptor(descriptor)
                emit(
                    .released(index: entry.index, role: names.role, typeName: names.typeName), for: node, at: time,
                    in: &state)
            }
        }
        return false
    }

    /// Applies a logged attach and its objects as the locked path would have.
    private func apply(
        _ entry: LogEntry, _ details: consuming AttachDetails, _ objects: AttachedObjects, to state: inout State
    ) {
        let (node, time) = (entry.node, entry.time)
        let descriptor = Self.register(entry, details, in: &state)
        let namesAreRead = Self.namesAreRead(in: state)
        if namesAreRead {
            let name = details.name ?? state.registry.nodeDescriptor(descriptor).name
            emit(
                .attached(parent: details.parent, kind: details.kind, name: name), for: node, at: time,
                origin: details.origin, in: &state)
        } else {
            emit(.attached(parent: details.parent, kind: .unnamed, name: ""), for: node, at: time, in: &state)
        }
        Self.add(objects, to: node, in: &state) { added, descriptor, state in
            guard namesAreRead else {
                emit(.objectAdded(index: added, role: .unnamed, typeName: ""), for: node, at: time, in: &state)
                return
            }
            let names = state.registry.objectDescriptor(descriptor)
            emit(.objectAdded(index: added, role: names.role, typeName: names.typeName), for: node, at: time, in: &state)
        }
    }

    /// Adds an attach's objects to its node, the node's record read and written once, taking
    /// every record (also when the node takes none); calls `body` with each added object's
    /// index and descriptor id.
    @inline(__always)
    private static func add(
        _ objects: AttachedObjects, to node: NodeID, in state: inout State,
        _ body: (_ index: UInt16, _ descriptor: UInt32, _ state: inout State) -> Void
    ) {
        guard var adding = state.registry.beginAdding(to: node) else {
            for number in 0..<objects.count { _ = objects.take(number) }
            return
        }
        for number in 0..<objects.count {
            let record = objects.take(number)
            guard
                let (added, descriptor) = state.registry.add(
                    &adding, type: record.type, role: record.role, address: record.address)
            else { continue }
            body(added, descriptor, &state)
        }
        state.registry.finishAdding(adding)
    }

    /// ``apply(_:to:)`` for the log's consumer encoding straight, its feed the only sink:
    /// each event is handed to `straight` in plain values, with no change made for it.
    /// Inlined into the log's loop: a call per change cost its prologue and epilogue (about 18
    /// instructions).
    @inline(__always)
    private func apply(_ entry: LogEntry, encodingWith straight: any AppliedChangeEncoder, to state: inout State) -> Bool {
        let (node, time) = (entry.node, entry.time)
        switch entry.operation {
        case .attach:
            return false
        case .state:
            guard let attachedAt = state.registry.setState(entry.state, of: node) else { return false }
            state.sequence &+= 1
            straight.encodeStateChanged(
                sequence: state.sequence, time: max(time, attachedAt), node: node, state: entry.state)
        case .detach:
            // Emptied from its end: `removeAll(keepingCapacity:)` replaces a subrange (about
            // 60 instructions for the usual one id), and `popLast` is a call.
            while !state.detachOrder.isEmpty { state.detachOrder.removeLast() }
            state.registry.detach(node, time: time, into: &state.detachOrder)
            for id in state.detachOrder {
                state.sequence &+= 1
                straight.encodeDetached(sequence: state.sequence, time: time, node: id)
            }
            return true
        case .release:
            guard state.registry.releaseObject(node, index: entry.index) != nil else { return false }
            state.sequence &+= 1
            straight.encodeReleased(sequence: state.sequence, time: time, node: node, index: entry.index)
        }
        return false
    }

    /// ``apply(_:_:_:to:)`` for the log's consumer encoding straight.
    private func apply(
        _ entry: LogEntry, _ details: consuming AttachDetails, _ objects: AttachedObjects,
        encodingWith straight: any AppliedChangeEncoder, to state: inout State
    ) {
        let (node, time) = (entry.node, entry.time)
        let descriptor = Self.register(entry, details, in: &state)
        state.sequence &+= 1
        // The descriptor names the node as the details do (its name is the details' or the
        // principal's type's; its kind and origin are theirs).
        let sequence = state.sequence
        straight.encodeAttached(
            sequence: sequence, time: time, node: node, parent: details.parent, descriptor: descriptor,
            epoch: state.registry.descriptorEpoch, names: { state.registry.nodeDescriptor(descriptor) })
        // Its objects, with the node's record read and written once. (An encoder's names
        // are looked up in the registry, whose record of the node is not written meanwhile.)
        Self.add(objects, to: node, in: &state) { added, descriptor, state in
            state.sequence &+= 1
            let sequence = state.sequence
            straight.encodeObjectAdded(
                sequence: sequence, time: time, node: node, index: added, descriptor: descriptor,
                epoch: state.registry.descriptorEpoch, names: { state.registry.objectDescriptor(descriptor) })
        }
    }

    /// Registers a logged attach (and its test); returns its descriptor's id.
    @inline(__always)
    private static func register(_ entry: LogEntry, _ details: borrowing AttachDetails, in state: inout State) -> UInt32 {
        let descriptor = state.registry.attach(
            entry.node, parent: details.parent, type: details.type, name: details.name, kind: details.kind,
            time: entry.time, origin: details.origin, expectedObjects: Int(entry.index))
        if details.origin.test != nil { noteTest(details.origin.test, in: &state) }
        return descriptor
    }

    /// Whether ``emit(_:for:at:origin:in:)`` reads a change's names: not when nothing listens,
    /// nor when the log's consumer, its feed the only sink, makes no event of it.
    private static func namesAreRead(in state: State) -> Bool {
        guard !state.sinks.isEmpty else { return false }
        guard state.directFeed != nil, !state.directFeedWantsEvents, state.sinks.count == 1 else { return true }
        return state.sinks[0] !== state.directFeed
    }

    private static func noteTest(_ test: TestIdentity?, in state: inout State) {
        if let test, state.tests.count < Self.maxTests, state.testIDs.insert(test.id).inserted {
            state.tests.append(test)
        }
    }

    /// Numbers a change and hands it to the sinks, stamped now unless a time is given.
    private func emit(
        _ change: consuming DebugInformation.Change, for node: NodeID, at time: UInt64? = nil, origin: NodeOrigin? = nil,
        in state: inout State
    ) {
        state.sequence &+= 1
        guard !state.sinks.isEmpty else { return }
        let time = time ?? MonotonicClock.now()
        if let straight = state.straight, state.directFeed != nil {
            // The log's consumer applying its own log, its feed the only sink (see
            // applyRecorded(for:into:encoding:maximum:)): encoded as made, no event made.
            guard state.directFeedWantsEvents else { return }
            straight.encode(sequence: state.sequence, time: time, node: node, change: change, origin: origin)
            return
        }
        if !state.directFeedWantsEvents, state.sinks.count == 1, let feed = state.directFeed, state.sinks[0] === feed {
            // The log's consumer applying its own log, and its feed, the only sink, wants no
            // event: none is made.
            state.discardedEvents &+= 1
            return
        }
        if state.directFeed == nil, let consumer = state.soleConsumer {
            // A thread other than the consumer's applying the log (a reader, or an app thread
            // that found it full): the event is made for the consumer's queue alone, and moved
            // there.
            consumer.receiveMade(
                DebugInformation(sequence: state.sequence, time: time, node: node, change: consume change, origin: origin))
            wakeConsumerIfIdle()
            return
        }
        let event = DebugInformation(sequence: state.sequence, time: time, node: node, change: consume change, origin: origin)
        for sink in state.sinks {
            if let feed = state.directFeed, sink === feed {
                if state.directFeedWantsEvents {
                    state.directEvents.append(event)
                } else {
                    state.discardedEvents &+= 1
                }
            } else {
                sink.receive(event)
            }
        }
        wakeConsumerIfIdle()
    }
}
