import NodesTracking
import NodescopeWire

/// Turns a tracker's snapshots and events into the host stream's frames for one connection,
/// defining each string (kinds, names, roles, type names) the first time it is used.
///
/// On a connection of version 2 it also sends where each node was attached and under which test
/// (`nodeOrigin`), defining each site (`defineSite`) and test (`defineTest`) once.
///
/// A new connection needs a new encoder: string, site and test ids are per connection.
struct HostStreamEncoder {
    private var encoder = FrameEncoder()
    private var strings: [String: UInt32] = [:]
    private var nextStringID: UInt32 = 1
    /// Recently interned strings by a hash of their bits (see `intern`): the bits and the id in
    /// plain arrays, compared without touching the string; id 0 marks an empty entry.
    private var recentBits = [(UInt64, UInt64)](repeating: (0, 0), count: 32)
    private var recentIDs = [UInt32](repeating: 0, count: 32)
    /// The strings of `recentBits`, kept so that the bits stay theirs (their storage cannot be
    /// reused meanwhile).
    private var recentStrings = [String](repeating: "", count: 32)
    private var sites: [SiteKey: UInt32] = [:]
    /// Recently interned sites by their words (see `intern(_:into:)`); id 0 marks an empty entry.
    private var recentSites = [(words: (UInt, UInt), id: UInt32)](repeating: ((0, 0), 0), count: 16)
    private var tests: [UInt64: UInt32] = [:]
    /// The wire ids of the tracker's node descriptors met on this connection, by descriptor id
    /// (kind 0: not met), and of its object descriptors (role 0: not met); valid for
    /// `namesEpoch` (see ``NodeRegistry/descriptorEpoch``). An attach or an added object whose
    /// descriptor was met costs no look-up of its strings.
    private var nodeWire: [NodeWireIDs] = []
    private var objectWire: [(role: UInt32, typeName: UInt32)] = []
    private var namesEpoch = DescriptorEpoch.none
    /// Whether the connection speaks version 2, which carries node origins.
    var sendsOrigins = false {
        // What was kept by descriptor was made for the other answer.
        didSet { namesEpoch = .none }
    }
    /// Whether the connection speaks version 3, whose retainer paths carry closure sites.
    var sendsClosureSites = false

    /// Appends the frames of `snapshot`: begin, each node as the events that rebuild it, end.
    mutating func encode(_ snapshot: TreeSnapshot, into buffer: inout [UInt8]) {
        let sequence = snapshot.sequence
        // Tests first (outside the snapshot's frames, which they may precede): tests whose nodes
        // are all gone are known this way too.
        if sendsOrigins {
            for test in snapshot.tests { _ = intern(test, into: &buffer) }
        }
        encoder.encode(
            .snapshotBegin(SnapshotBeginFrame(sequence: sequence, nodeCount: UInt32(clamping: snapshot.nodes.count))),
            into: &buffer)
        for node in snapshot.nodes {
            let id = node.id.rawValue
            let kind = intern(node.kind.rawValue, into: &buffer)
            let name = intern(node.name, into: &buffer)
            DeltaFrameWriter.nodeAttached(
                sequence: sequence, time: node.attachedAt, node: id, parent: node.parent?.rawValue ?? 0, kind: kind,
                name: name, into: &buffer)
            encodeOrigin(node.origin, of: id, into: &buffer)
            for object in node.objects {
                let role = intern(object.role.rawValue, into: &buffer)
                let typeName = intern(object.typeName, into: &buffer)
                DeltaFrameWriter.objectAdded(
                    sequence: sequence, time: node.attachedAt, node: id, index: object.index, role: role,
                    typeName: typeName, into: &buffer)
            }
            for object in node.objects where !object.isAlive {
                DeltaFrameWriter.objectReleased(
                    sequence: sequence, time: node.detachedAt ?? node.attachedAt, node: id, index: object.index,
                    into: &buffer)
            }
            if let state = node.state, let wireState = WireNodeState(rawValue: state.rawValue) {
                DeltaFrameWriter.stateChanged(
                    sequence: sequence, time: node.attachedAt, node: id, state: wireState.rawValue, into: &buffer)
            }
            if let detachedAt = node.detachedAt {
                DeltaFrameWriter.nodeDetached(sequence: sequence, time: detachedAt, node: id, into: &buffer)
            }
        }
        encoder.encode(.snapshotEnd(sequence: sequence), into: &buffer)
    }

    /// Appends the frame of one event (and the definitions of any new strings it uses).
    mutating func encode(_ event: DebugInformation, into buffer: inout [UInt8]) {
        encode(
            sequence: event.sequence, time: event.time, node: event.node, change: event.change, origin: event.origin,
            into: &buffer)
    }

    /// Appends the frame of one event given by its parts (and the definitions of any new
    /// strings it uses): the agent's writer encodes the changes it applies this way, without
    /// making a ``DebugInformation`` of each.
    mutating func encode(
        sequence: UInt64, time: UInt64, node: NodeID, change: borrowing DebugInformation.Change, origin: NodeOrigin?,
        into buffer: inout [UInt8]
    ) {
        let id = node.rawValue
        switch change {
        case .attached(let parent, let kind, let name):
            let kindID = intern(kind.rawValue, into: &buffer)
            let nameID = intern(name, into: &buffer)
            DeltaFrameWriter.nodeAttached(
                sequence: sequence, time: time, node: id, parent: parent?.rawValue ?? 0, kind: kindID, name: nameID,
                into: &buffer)
            if let origin { encodeOrigin(origin, of: id, into: &buffer) }
        case .objectAdded(let index, let role, let typeName):
            let roleID = intern(role.rawValue, into: &buffer)
            let typeID = intern(typeName, into: &buffer)
            DeltaFrameWriter.objectAdded(
                sequence: sequence, time: time, node: id, index: index, role: roleID, typeName: typeID, into: &buffer)
        case .stateChanged(let state):
            guard let wireState = WireNodeState(rawValue: state.rawValue) else { return }
            DeltaFrameWriter.stateChanged(sequence: sequence, time: time, node: id, state: wireState.rawValue, into: &buffer)
        case .detached:
            DeltaFrameWriter.nodeDetached(sequence: sequence, time: time, node: id, into: &buffer)
        case .released(let index, _, _):
            DeltaFrameWriter.objectReleased(sequence: sequence, time: time, node: id, index: index, into: &buffer)
        }
    }

    // One method per kind of change, with plain values: the tracker's straight path
    // (``AppliedChangeEncoder``), which makes no `DebugInformation.Change` for them.

    // Their frames go to a ``ByteRun``; a definition they need first (rare: once per string,
    // site and test) is encoded apart and appended before them.

    /// What an attach's frames carry of its node's descriptor.
    private struct NodeWireIDs {
        var kind: UInt32 = 0
        var name: UInt32 = 0
        var site: UInt32 = 0
        var test: UInt32 = 0
    }

    /// Appends an `attached` frame and the node's origin (on a connection of version 2, when
    /// something is known) for a node named by the registry's node descriptor `descriptor`, as
    /// of `epoch`; `names` gives its name, kind and origin when this connection has not met it.
    mutating func encodeAttached(
        sequence: UInt64, time: UInt64, node: UInt64, parent: UInt64, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> NodeDescriptor, into run: ByteRun
    ) {
        // The common case (a descriptor met on this connection, in the current epoch) makes no
        // call, so that it saves no registers: the rest is a function of its own.
        let slot = Int(descriptor)
        guard isCurrent(epoch), slot < nodeWire.count, nodeWire[slot].kind != 0 else {
            return encodeAttachedMeeting(
                sequence: sequence, time: time, node: node, parent: parent, descriptor: descriptor, epoch: epoch,
                names: names, into: run)
        }
        Self.encodeAttached(
            sequence: sequence, time: time, node: node, parent: parent, ids: nodeWire[slot], sendsOrigins: sendsOrigins,
            into: run)
    }

    @inline(never)
    private mutating func encodeAttachedMeeting(
        sequence: UInt64, time: UInt64, node: UInt64, parent: UInt64, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> NodeDescriptor, into run: ByteRun
    ) {
        check(epoch)
        let slot = Int(descriptor)
        if slot >= nodeWire.count || nodeWire[slot].kind == 0 {
            nodeWireIDs(of: descriptor, names: names, before: run)
        }
        Self.encodeAttached(
            sequence: sequence, time: time, node: node, parent: parent, ids: nodeWire[slot], sendsOrigins: sendsOrigins,
            into: run)
    }

    /// (Static: a method of the encoder, called from a mutating one, ran on a copy of it.)
    @inline(__always)
    private static func encodeAttached(
        sequence: UInt64, time: UInt64, node: UInt64, parent: UInt64, ids: NodeWireIDs, sendsOrigins: Bool,
        into run: ByteRun
    ) {
        var run = run
        DeltaFrameWriter.nodeAttached(
            sequence: sequence, time: time, node: node, parent: parent, kind: ids.kind, name: ids.name, into: &run)
        guard sendsOrigins, ids.site != 0 || ids.test != 0 else { return }
        DeltaFrameWriter.nodeOrigin(node: node, site: ids.site, test: ids.test, into: &run)
    }

    /// Appends an `objectAdded` frame for an object named by the registry's object descriptor
    /// `descriptor`, as of `epoch`; `names` gives its role and type name when this connection has
    /// not met it.
    /// (The writer's straight encoding writes the frame of a descriptor met already itself,
    /// through ``knownObjectIDs(of:in:)``; this is the rest.)
    mutating func encodeObjectAdded(
        sequence: UInt64, time: UInt64, node: UInt64, index: UInt16, descriptor: UInt32,
        epoch: DescriptorEpoch, names: () -> ObjectDescriptor, into run: ByteRun
    ) {
        check(epoch)
        let slot = Int(descriptor)
        if slot >= objectWire.count || objectWire[slot].role == 0 {
            objectWireIDs(of: descriptor, names: names, before: run)
        }
        let ids = objectWire[slot]
        var run = run
        DeltaFrameWriter.objectAdded(
            sequence: sequence, time: time, node: node, index: index, role: ids.role, typeName: ids.typeName,
            into: &run)
    }

    /// The wire ids of object descriptor `descriptor` as of `epoch`, when this connection has met
    /// it (with no call: the straight encoding's common case).
    @inline(__always)
    func knownObjectIDs(of descriptor: UInt32, in epoch: DescriptorEpoch) -> (role: UInt32, typeName: UInt32)? {
        let slot = Int(descriptor)
        guard isCurrent(epoch), slot < objectWire.count else { return nil }
        let ids = objectWire[slot]
        return ids.role != 0 ? ids : nil
    }

    /// Whether the wire ids kept by descriptor are of `epoch`.
    @inline(__always)
    private func isCurrent(_ epoch: DescriptorEpoch) -> Bool {
        // Word by word here: `==` is a call across modules.
        epoch.registry == namesEpoch.registry && epoch.nodeSweeps == namesEpoch.nodeSweeps
            && epoch.objectSweeps == namesEpoch.objectSweeps
    }

    /// Forgets the wire ids kept by descriptor when `epoch` is another registry's or a later one.
    private mutating func check(_ epoch: DescriptorEpoch) {
        if !isCurrent(epoch) {
            namesEpoch = epoch
            nodeWire.removeAll(keepingCapacity: true)
            objectWire.removeAll(keepingCapacity: true)
        }
    }

    @inline(never)
    private mutating func nodeWireIDs(of descriptor: UInt32, names: () -> NodeDescriptor, before run: ByteRun) {
        let named = names()
        var definitions: [UInt8] = []
        var ids = NodeWireIDs()
        ids.kind = intern(named.kind.rawValue, into: &definitions)
        ids.name = intern(named.name, into: &definitions)
        if sendsOrigins {
            ids.site = named.origin.site.map { intern($0, into: &definitions) } ?? 0
            ids.test = named.origin.test.map { intern($0, into: &definitions) } ?? 0
        }
        if !definitions.isEmpty { run.append(definitions) }
        let slot = Int(descriptor)
        if slot >= nodeWire.count {
            nodeWire.append(contentsOf: repeatElement(NodeWireIDs(), count: slot + 1 - nodeWire.count))
        }
        nodeWire[slot] = ids
    }

    @inline(never)
    private mutating func objectWireIDs(of descriptor: UInt32, names: () -> ObjectDescriptor, before run: ByteRun) {
        let named = names()
        let ids = internPair(named.role.rawValue, named.typeName, before: run)
        let slot = Int(descriptor)
        if slot >= objectWire.count {
            objectWire.append(contentsOf: repeatElement((role: UInt32(0), typeName: UInt32(0)), count: slot + 1 - objectWire.count))
        }
        objectWire[slot] = (ids.0, ids.1)
    }

    /// The ids of two strings, any definition they need appended to `run` first.
    private mutating func internPair(_ first: String, _ second: String, before run: ByteRun) -> (UInt32, UInt32) {
        var definitions: [UInt8] = []
        let ids = (intern(first, into: &definitions), intern(second, into: &definitions))
        if !definitions.isEmpty { run.append(definitions) }
        return ids
    }

    /// Appends any other message (hello, dropped, goodbye, retainers): a retainer path's closure
    /// sites only on a connection of version 3.
    mutating func encode(_ message: WireMessage, into buffer: inout [UInt8]) {
        if !sendsClosureSites, case .retainers(var frame) = message, frame.hops.contains(where: { $0.closure != nil }) {
            for index in frame.hops.indices { frame.hops[index].closure = nil }
            encoder.encode(.retainers(frame), into: &buffer)
            return
        }
        encoder.encode(message, into: &buffer)
    }

    /// Appends a node's `nodeOrigin` (and the definitions it needs), on a connection of version 2
    /// and when something is known.
    private mutating func encodeOrigin(_ origin: borrowing NodeOrigin, of node: UInt64, into buffer: inout [UInt8]) {
        guard sendsOrigins, origin.site != nil || origin.test != nil else { return }
        let siteID = origin.site.map { intern($0, into: &buffer) } ?? 0
        let testID = origin.test.map { intern($0, into: &buffer) } ?? 0
        DeltaFrameWriter.nodeOrigin(node: node, site: siteID, test: testID, into: &buffer)
    }

    private mutating func intern(_ site: AttachSite, into buffer: inout [UInt8]) -> UInt32 {
        // Most attaches come from a few sites: a small cache of recent ones, compared by their
        // words (the file literal's address, the line), spares hashing a site's key.
        guard let words = site.words else { return internByKey(site, into: &buffer) }
        let slot = Int(truncatingIfNeeded: (UInt64(words.0 ^ words.1 &* 31) &* 0x9E37_79B9_7F4A_7C15) >> 60)
        if recentSites[slot].words == words, recentSites[slot].id != 0 { return recentSites[slot].id }
        let id = internByKey(site, into: &buffer)
        recentSites[slot] = (words, id)
        return id
    }

    private mutating func internByKey(_ site: AttachSite, into buffer: inout [UInt8]) -> UInt32 {
        let key = site.internKey
        if let id = sites[key] { return id }
        let file = intern(site.filePath, into: &buffer)
        let id = UInt32(sites.count + 1)
        sites[key] = id
        encoder.encode(.defineSite(DefineSiteFrame(siteID: id, fileStringID: file, line: site.line)), into: &buffer)
        return id
    }

    private mutating func intern(_ test: TestIdentity, into buffer: inout [UInt8]) -> UInt32 {
        if let id = tests[test.id] { return id }
        let suite = test.suite.isEmpty ? 0 : intern(test.suite, into: &buffer)
        let name = intern(test.name, into: &buffer)
        let site = test.site.map { intern($0, into: &buffer) } ?? 0
        let id = UInt32(tests.count + 1)
        tests[test.id] = id
        encoder.encode(
            .defineTest(DefineTestFrame(testID: id, suiteStringID: suite, nameStringID: name, siteID: site)), into: &buffer)
        return id
    }

    private mutating func intern(_ string: String, into buffer: inout [UInt8]) -> UInt32 {
        // Most strings of a stream repeat (kinds, roles, a few type names): a small cache of
        // recent ones, compared by their bits, spares hashing them. Equal bits are the same
        // string: the same small string inline, or the same storage, which the cache keeps alive.
        let bits = unsafeBitCast(string, to: (UInt64, UInt64).self)
        let slot = Int(truncatingIfNeeded: ((bits.0 ^ bits.1) &* 0x9E37_79B9_7F4A_7C15) >> 59)
        if recentBits[slot] == bits, recentIDs[slot] != 0 { return recentIDs[slot] }
        let id: UInt32
        if let known = strings[string] {
            id = known
        } else {
            id = nextStringID
            nextStringID &+= 1
            strings[string] = id
            encoder.encode(.defineString(DefineStringFrame(stringID: id, value: string)), into: &buffer)
        }
        recentStrings[slot] = string
        recentBits[slot] = bits
        recentIDs[slot] = id
        return id
    }
}
