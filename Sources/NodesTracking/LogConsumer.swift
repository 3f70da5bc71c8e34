/// The sink that drains a tracker's log on a thread of its own (the agent's feed), as the
/// tracker sees it. The tracker knows its consumer only through this protocol, so that the
/// tracking module does not depend on the agent.
///
/// While a consumer is the tracker's only sink, the app's threads only record their changes in
/// the log; the consumer applies them (``NodeTracker/applyRecorded(for:into:encoding:maximum:)``)
/// and receives their events without a queue in between.
package protocol LogConsumer: DebugSink {
    /// Whether the consumer wants events now (a collector accepted its connection): the
    /// tracker reads it for every event it hands over directly, so it must be cheap.
    var wantsEvents: Bool { get }

    /// Moves the events queued for the consumer (by ``DebugSink/receive(_:)``, from the threads
    /// that applied changes) into `batch`, and returns how many were dropped since the last
    /// call. Called under the tracker's lock, which its producers hold too.
    func takeQueued(into batch: inout [DebugInformation]) -> UInt64

    /// Like ``takeQueued(into:)``, but while none was dropped, each queued event is moved out
    /// and handed to `encoding` (which encodes it, in order) rather than appended to `batch`:
    /// no copy of it is made. Called under the tracker's lock.
    func takeQueued(into batch: inout [DebugInformation], encoding: any AppliedChangeEncoder) -> UInt64

    /// Receives an event made for this consumer alone (it is the tracker's only sink), which it
    /// may keep without a copy. Called under the tracker's lock.
    func receiveMade(_ event: consuming DebugInformation)

    /// Wakes the consumer's thread, which sleeps for want of work (see
    /// ``NodeTracker/setConsumerToWake(_:)``): a change was recorded, or the log is half full.
    func wakeUp()
}

extension LogConsumer {
    package func takeQueued(into batch: inout [DebugInformation], encoding: any AppliedChangeEncoder) -> UInt64 {
        let dropped = takeQueued(into: &batch)
        if dropped == 0 {
            for event in batch { encoding.encode(event) }
            batch.removeAll(keepingCapacity: true)
        }
        return dropped
    }

    package func receiveMade(_ event: consuming DebugInformation) {
        receive(event)
    }
}

/// What a ``LogConsumer`` hands to ``NodeTracker/applyRecorded(for:into:encoding:maximum:)`` to
/// encode each event as the tracker makes it, without a ``DebugInformation`` of each: the agent's
/// writer, encoding for its connection. It is lent to the tracker for the call, under its lock.
package protocol AppliedChangeEncoder: AnyObject, Sendable {
    /// Encodes an event that was queued before.
    func encode(_ event: DebugInformation)

    /// Encodes one event given by its parts.
    func encode(
        sequence: UInt64, time: UInt64, node: NodeID, change: borrowing DebugInformation.Change, origin: NodeOrigin?)

    // One call per kind of change, with plain values: how the tracker hands over the changes it
    // applies from its log, with no `DebugInformation.Change` made and destroyed for each.

    /// Encodes an `attached` event and the node's origin: its name, kind and origin are those
    /// of the registry's node descriptor `descriptor`, which `names` gives. An encoder may keep
    /// what it made of them by the id while the registry's ``NodeRegistry/descriptorEpoch`` stays
    /// `epoch`, and call `names` only for a descriptor it has not met (the agent's writer does:
    /// then an attach from a known place costs no look-up of its strings).
    func encodeAttached(
        sequence: UInt64, time: UInt64, node: NodeID, parent: NodeID?, descriptor: UInt32, epoch: DescriptorEpoch,
        names: () -> NodeDescriptor)

    /// Encodes an `objectAdded` event, whose role and type name are those of the registry's
    /// object descriptor `descriptor` (as for
    /// ``encodeAttached(sequence:time:node:parent:descriptor:epoch:names:)``).
    func encodeObjectAdded(
        sequence: UInt64, time: UInt64, node: NodeID, index: UInt16, descriptor: UInt32, epoch: DescriptorEpoch,
        names: () -> ObjectDescriptor)

    /// Encodes a `stateChanged` event.
    func encodeStateChanged(sequence: UInt64, time: UInt64, node: NodeID, state: NodeState)

    /// Encodes a `detached` event.
    func encodeDetached(sequence: UInt64, time: UInt64, node: NodeID)

    /// Encodes a `released` event (whose frame carries no names).
    func encodeReleased(sequence: UInt64, time: UInt64, node: NodeID, index: UInt16)
}

extension AppliedChangeEncoder {
    package func encodeAttached(
        sequence: UInt64, time: UInt64, node: NodeID, parent: NodeID?, descriptor: UInt32, epoch: DescriptorEpoch,
        names: () -> NodeDescriptor
    ) {
        let names = names()
        encode(
            sequence: sequence, time: time, node: node,
            change: .attached(parent: parent, kind: names.kind, name: names.name), origin: names.origin)
    }

    package func encodeObjectAdded(
        sequence: UInt64, time: UInt64, node: NodeID, index: UInt16, descriptor: UInt32, epoch: DescriptorEpoch,
        names: () -> ObjectDescriptor
    ) {
        let names = names()
        encode(
            sequence: sequence, time: time, node: node,
            change: .objectAdded(index: index, role: names.role, typeName: names.typeName), origin: nil)
    }

    package func encodeStateChanged(sequence: UInt64, time: UInt64, node: NodeID, state: NodeState) {
        encode(sequence: sequence, time: time, node: node, change: .stateChanged(state), origin: nil)
    }

    package func encodeDetached(sequence: UInt64, time: UInt64, node: NodeID) {
        encode(sequence: sequence, time: time, node: node, change: .detached, origin: nil)
    }

    package func encodeReleased(sequence: UInt64, time: UInt64, node: NodeID, index: UInt16) {
        encode(
            sequence: sequence, time: time, node: node,
            change: .released(index: index, role: ObjectRole(rawValue: ""), typeName: ""), origin: nil)
    }
}
