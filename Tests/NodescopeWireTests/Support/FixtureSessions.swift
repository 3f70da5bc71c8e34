import NodescopeWire

/// The sessions stored as binary fixtures under `Fixtures/`, one direction of one connection
/// per file. All are version 1 sessions but `host-v2-retainers.bin`, which speaks version 2. `FixtureTests` checks that the files still match these definitions; set
/// `NODESCOPE_UPDATE_SNAPSHOTS=1` to rewrite them after a deliberate change.
enum FixtureSessions {
    static let all: [(file: String, messages: [WireMessage])] = [
        ("host-normal-exit.bin", hostNormalExit),
        ("host-dropped-resync.bin", hostDroppedResync),
        ("host-abnormal-end.bin", hostAbnormalEnd),
        ("client-queries.bin", clientQueries),
        ("collector-replies.bin", collectorReplies),
        ("host-v2-retainers.bin", hostRetainers),
    ]

    private static let second: UInt64 = 1_000_000_000

    /// A host that attaches a root with one child, detaches the child, releases its objects and
    /// exits normally.
    static let hostNormalExit: [WireMessage] = [
        .hello(
            Hello(
                protocolVersion: 1, role: .host, pid: 4242, monotonicNanos: 5 * second, wallNanos: 1_700_000_000 * second,
                processName: "sample-nodes")),
        .defineString(DefineStringFrame(stringID: 1, value: "AppFlow")),
        .defineString(DefineStringFrame(stringID: 2, value: "flow")),
        .defineString(DefineStringFrame(stringID: 3, value: "context")),
        .defineString(DefineStringFrame(stringID: 4, value: "AppContext")),
        .snapshotBegin(SnapshotBeginFrame(sequence: 4, nodeCount: 1)),
        .nodeAttached(NodeAttachedFrame(sequence: 4, timeNanos: 5 * second, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 4, timeNanos: 5 * second, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
        .objectAdded(ObjectAddedFrame(sequence: 4, timeNanos: 5 * second, nodeID: 1, objectIndex: 1, roleStringID: 3, typeNameStringID: 4)),
        .stateChanged(StateChangedFrame(sequence: 4, timeNanos: 5 * second, nodeID: 1, state: .active)),
        .snapshotEnd(sequence: 4),
        .defineString(DefineStringFrame(stringID: 5, value: "LoginFlow")),
        .defineString(DefineStringFrame(stringID: 6, value: "LoginContext")),
        .nodeAttached(NodeAttachedFrame(sequence: 5, timeNanos: 6 * second, nodeID: 2, parentID: 1, kindStringID: 5, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 6, timeNanos: 6 * second, nodeID: 2, objectIndex: 0, roleStringID: 2, typeNameStringID: 5)),
        .objectAdded(ObjectAddedFrame(sequence: 7, timeNanos: 6 * second, nodeID: 2, objectIndex: 1, roleStringID: 3, typeNameStringID: 6)),
        .stateChanged(StateChangedFrame(sequence: 8, timeNanos: 6 * second, nodeID: 2, state: .started)),
        .stateChanged(StateChangedFrame(sequence: 9, timeNanos: 6 * second + 1_000, nodeID: 2, state: .active)),
        .heartbeat(monotonicNanos: 7 * second),
        .stateChanged(StateChangedFrame(sequence: 10, timeNanos: 8 * second, nodeID: 2, state: .inactive)),
        .stateChanged(StateChangedFrame(sequence: 11, timeNanos: 8 * second + 1_000, nodeID: 2, state: .ended)),
        .nodeDetached(NodeDetachedFrame(sequence: 12, timeNanos: 8 * second + 2_000, nodeID: 2)),
        .objectReleased(ObjectReleasedFrame(sequence: 13, timeNanos: 8 * second + 3_000, nodeID: 2, objectIndex: 1)),
        .objectReleased(ObjectReleasedFrame(sequence: 14, timeNanos: 8 * second + 4_000, nodeID: 2, objectIndex: 0)),
        .goodbye(.normalExit),
    ]

    /// A host whose queue overflowed: after `dropped` it resends a full snapshot, which includes a
    /// detached node whose context is still alive.
    static let hostDroppedResync: [WireMessage] = [
        .hello(
            Hello(
                protocolVersion: 1, role: .host, pid: 777, monotonicNanos: second, wallNanos: 1_700_000_100 * second,
                processName: "Straße-App 🌲")),
        .defineString(DefineStringFrame(stringID: 1, value: "RootFlow")),
        .defineString(DefineStringFrame(stringID: 2, value: "flow")),
        .defineString(DefineStringFrame(stringID: 3, value: "SettingsFlow")),
        .defineString(DefineStringFrame(stringID: 4, value: "context")),
        .defineString(DefineStringFrame(stringID: 5, value: "SettingsContext")),
        .defineString(DefineStringFrame(stringID: 6, value: "settings")),
        .snapshotBegin(SnapshotBeginFrame(sequence: 3, nodeCount: 1)),
        .nodeAttached(NodeAttachedFrame(sequence: 3, timeNanos: second, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 3, timeNanos: second, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
        .stateChanged(StateChangedFrame(sequence: 3, timeNanos: second, nodeID: 1, state: .active)),
        .snapshotEnd(sequence: 3),
        .nodeAttached(NodeAttachedFrame(sequence: 4, timeNanos: 2 * second, nodeID: 2, parentID: 1, kindStringID: 3, nameStringID: 6)),
        .dropped(count: 5),
        .snapshotBegin(SnapshotBeginFrame(sequence: 9, nodeCount: 2)),
        .nodeAttached(NodeAttachedFrame(sequence: 9, timeNanos: second, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 9, timeNanos: second, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
        .stateChanged(StateChangedFrame(sequence: 9, timeNanos: second, nodeID: 1, state: .active)),
        .nodeAttached(NodeAttachedFrame(sequence: 9, timeNanos: 2 * second, nodeID: 2, parentID: 1, kindStringID: 3, nameStringID: 6)),
        .objectAdded(ObjectAddedFrame(sequence: 9, timeNanos: 2 * second, nodeID: 2, objectIndex: 0, roleStringID: 2, typeNameStringID: 3)),
        .objectAdded(ObjectAddedFrame(sequence: 9, timeNanos: 2 * second, nodeID: 2, objectIndex: 1, roleStringID: 4, typeNameStringID: 5)),
        .objectReleased(ObjectReleasedFrame(sequence: 9, timeNanos: 3 * second, nodeID: 2, objectIndex: 0)),
        .stateChanged(StateChangedFrame(sequence: 9, timeNanos: 3 * second, nodeID: 2, state: .ended)),
        .nodeDetached(NodeDetachedFrame(sequence: 9, timeNanos: 3 * second, nodeID: 2)),
        .snapshotEnd(sequence: 9),
        .objectReleased(ObjectReleasedFrame(sequence: 10, timeNanos: 4 * second, nodeID: 2, objectIndex: 1)),
        .goodbye(.agentDisabled),
    ]

    /// A host that stops mid-stream without a goodbye (it crashed or was killed).
    static let hostAbnormalEnd: [WireMessage] = [
        .hello(
            Hello(
                protocolVersion: 1, role: .host, pid: 31337, monotonicNanos: 10 * second, wallNanos: 1_700_000_200 * second,
                processName: "crashy")),
        .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)),
        .snapshotEnd(sequence: 0),
        .defineString(DefineStringFrame(stringID: 1, value: "CheckoutFlow")),
        .defineString(DefineStringFrame(stringID: 2, value: "worker")),
        .defineString(DefineStringFrame(stringID: 3, value: "PaymentWorker")),
        .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 11 * second, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .objectAdded(
            ObjectAddedFrame(sequence: 2, timeNanos: 11 * second, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 3)),
        .stateChanged(StateChangedFrame(sequence: 3, timeNanos: 11 * second, nodeID: 1, state: .active)),
        .nodeDetached(NodeDetachedFrame(sequence: 4, timeNanos: 12 * second, nodeID: 1)),
    ]

    /// A client asking for processes, a tree, leaks, and a subscription.
    static let clientQueries: [WireMessage] = [
        .hello(
            Hello(
                protocolVersion: 1, role: .client, pid: 5150, monotonicNanos: 20 * second, wallNanos: 1_700_000_300 * second,
                processName: "nodescope")),
        .request(ControlRequestFrame(requestID: 1, command: .listProcesses)),
        .request(ControlRequestFrame(requestID: 2, command: .tree, argument: "4242", depth: 2, rootPath: "AppFlow/LoginFlow")),
        .request(ControlRequestFrame(requestID: 3, command: .leaks, argument: "sample-nodes")),
        .request(ControlRequestFrame(requestID: 4, command: .subscribe, argument: "4242")),
        .request(ControlRequestFrame(requestID: 5, command: .unsubscribe, argument: "4")),
    ]

    /// The collector's side of the client session above.
    static let collectorReplies: [WireMessage] = [
        .helloAccepted(HelloAccepted(protocolVersion: 1, graceNanos: second, holdExit: false, collectorMonotonicNanos: 20 * second + 500)),
        .response(ControlResponseFrame(requestID: 1, status: .ok, part: 0, isLast: false, body: Array("[{\"pid\":4242,".utf8))),
        .response(ControlResponseFrame(requestID: 1, status: .ok, part: 1, isLast: true, body: Array("\"name\":\"sample-nodes\"}]".utf8))),
        .response(ControlResponseFrame(requestID: 2, status: .ok, part: 0, isLast: true, body: Array("AppFlow\n  LoginFlow\n".utf8))),
        .response(ControlResponseFrame(requestID: 3, status: .ambiguous, part: 0, isLast: true, body: [])),
        .response(ControlResponseFrame(requestID: 4, status: .ok, part: 0, isLast: true, body: [])),
        .event(ControlEventFrame(subscriptionID: 4, body: Array("{\"detached\":2}".utf8))),
        .response(ControlResponseFrame(requestID: 5, status: .ok, part: 0, isLast: true, body: [])),
    ]

    /// A host of protocol version 2: a node detached with its context still alive; once its
    /// grace ran out, the host says what holds the context (a path from an attached node, with
    /// a suspect hop) and what holds its flow (a retain cycle); later the node is released.
    static let hostRetainers: [WireMessage] = [
        .hello(
            Hello(
                protocolVersion: 2, role: .host, pid: 4343, monotonicNanos: 5 * second, wallNanos: 1_700_000_400 * second,
                processName: "sample-nodes")),
        .defineString(DefineStringFrame(stringID: 1, value: "AppFlow")),
        .defineString(DefineStringFrame(stringID: 2, value: "flow")),
        .defineString(DefineStringFrame(stringID: 3, value: "ProfileFlow")),
        .defineString(DefineStringFrame(stringID: 4, value: "context")),
        .defineString(DefineStringFrame(stringID: 5, value: "ProfileContextImp")),
        .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 1)),
        .nodeAttached(NodeAttachedFrame(sequence: 0, timeNanos: 5 * second, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 0, timeNanos: 5 * second, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
        .snapshotEnd(sequence: 0),
        .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 6 * second, nodeID: 2, parentID: 1, kindStringID: 3, nameStringID: 0)),
        .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 6 * second, nodeID: 2, objectIndex: 0, roleStringID: 2, typeNameStringID: 3)),
        .objectAdded(ObjectAddedFrame(sequence: 3, timeNanos: 6 * second, nodeID: 2, objectIndex: 1, roleStringID: 4, typeNameStringID: 5)),
        .nodeDetached(NodeDetachedFrame(sequence: 4, timeNanos: 7 * second, nodeID: 2)),
        .heartbeat(monotonicNanos: 8 * second + 50_000_000),
        .retainers(
            RetainersFrame(
                nodeID: 2, objectIndex: 1, verdict: .holder, elapsedMicros: 1_250,
                hops: [
                    RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlow", reference: ".component"),
                    RetainerHop(holderKind: .object, holder: "AppComponent", reference: ".shared[\"session\"]"),
                    RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[3]", isSuspect: true),
                    RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
                ])),
        .retainers(
            RetainersFrame(
                nodeID: 2, objectIndex: 0, verdict: .cycle, cutShort: true, elapsedMicros: 50_000, note: "cut short after 50 ms",
                hops: [
                    RetainerHop(holderKind: .detachedNodeObject, holderNodeID: 2, holder: "ProfileFlow", reference: ".context"),
                    RetainerHop(
                        holderKind: .detachedNodeObject, holderNodeID: 2, holder: "ProfileContextImp", reference: ".flow", isSuspect: true),
                ])),
        .objectReleased(ObjectReleasedFrame(sequence: 5, timeNanos: 9 * second, nodeID: 2, objectIndex: 1)),
        .objectReleased(ObjectReleasedFrame(sequence: 6, timeNanos: 9 * second, nodeID: 2, objectIndex: 0)),
        .goodbye(.normalExit),
    ]
}
