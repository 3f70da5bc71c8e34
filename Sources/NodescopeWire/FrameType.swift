/// The type byte of every frame defined by protocol versions 1 to 3.
///
/// The ranges are fixed: `0x01...0x0F` handshake, `0x10...0x3F` host stream, `0x40...0x5F` control.
/// Any other byte is an unknown type, and a peer closes the connection on it. A frame type of
/// version 2 (``retainers``, ``defineSite``, ``defineTest``, ``nodeOrigin``, ``explain``, ``explained``) on a
/// connection that negotiated version 1 is a violation too.
public enum FrameType: UInt8, Sendable, CaseIterable {
    /// ``Hello``, sent first by a host or a client.
    case hello = 0x01
    /// ``HelloAccepted``, the collector's answer to an acceptable hello.
    case helloAccepted = 0x02
    /// ``HelloRefused``, the collector's answer to a hello it will not serve.
    case helloRefused = 0x03
    /// ``DefineStringFrame``: an interned string.
    case defineString = 0x10
    /// ``SnapshotBeginFrame``: a full snapshot follows.
    case snapshotBegin = 0x11
    /// The end of a snapshot.
    case snapshotEnd = 0x12
    /// ``NodeAttachedFrame``.
    case nodeAttached = 0x13
    /// ``ObjectAddedFrame``.
    case objectAdded = 0x14
    /// ``StateChangedFrame``.
    case stateChanged = 0x15
    /// ``NodeDetachedFrame``.
    case nodeDetached = 0x16
    /// ``ObjectReleasedFrame``.
    case objectReleased = 0x17
    /// Events were lost; a snapshot follows.
    case dropped = 0x18
    /// The host ends its stream normally.
    case goodbye = 0x19
    /// An optional keep-alive.
    case heartbeat = 0x1A
    /// ``RetainersFrame`` (version 2): what holds an object of a detached node.
    case retainers = 0x1B
    /// ``DefineSiteFrame`` (version 2): an interned source location.
    case defineSite = 0x1C
    /// ``DefineTestFrame`` (version 2): an interned test.
    case defineTest = 0x1D
    /// ``NodeOriginFrame`` (version 2): where and under which test a node was attached.
    case nodeOrigin = 0x1E
    /// ``ExplainFrame`` (version 2), collector to host: explain these detached nodes now.
    case explain = 0x20
    /// ``ExplainedFrame`` (version 2), host to collector: the end of an answer to `explain`.
    case explained = 0x21
    /// ``ControlRequestFrame``, client to collector.
    case request = 0x40
    /// ``ControlResponseFrame``, collector to client.
    case response = 0x41
    /// ``ControlEventFrame``, collector to a subscribed client.
    case event = 0x42

    /// The first protocol version that defines this frame type.
    public var sinceVersion: UInt16 {
        switch self {
        case .retainers, .defineSite, .defineTest, .nodeOrigin, .explain, .explained: 2
        default: 1
        }
    }
}
