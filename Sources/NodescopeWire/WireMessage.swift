/// One decoded frame of the Nodescope protocol (versions 1 to 3).
///
/// Each case corresponds to one ``FrameType``. ``FrameEncoder`` turns a message into bytes and
/// ``FrameDecoder`` turns bytes back into messages.
public enum WireMessage: Equatable, Sendable {
    /// `0x01`: the first frame of every connection, from a host or a client.
    case hello(Hello)
    /// `0x02`: the collector accepts the hello.
    case helloAccepted(HelloAccepted)
    /// `0x03`: the collector refuses the hello and closes.
    case helloRefused(HelloRefused)
    /// `0x10`: a string is interned under an id.
    case defineString(DefineStringFrame)
    /// `0x11`: a snapshot of the host's whole state follows.
    case snapshotBegin(SnapshotBeginFrame)
    /// `0x12`: the snapshot consistent with `sequence` is complete; deltas follow.
    case snapshotEnd(sequence: UInt64)
    /// `0x13`: a node was attached.
    case nodeAttached(NodeAttachedFrame)
    /// `0x14`: an object of a node is watched.
    case objectAdded(ObjectAddedFrame)
    /// `0x15`: a node changed state.
    case stateChanged(StateChangedFrame)
    /// `0x16`: a node was detached.
    case nodeDetached(NodeDetachedFrame)
    /// `0x17`: an object of a node was released.
    case objectReleased(ObjectReleasedFrame)
    /// `0x18`: `count` events were lost since the last delivered one; a snapshot follows.
    case dropped(count: UInt64)
    /// `0x19`: the host ends its stream normally.
    case goodbye(GoodbyeReason)
    /// `0x1A`: an optional keep-alive carrying the sender's `CLOCK_MONOTONIC`.
    case heartbeat(monotonicNanos: UInt64)
    /// `0x1B` (version 2): what holds an object of a detached node.
    case retainers(RetainersFrame)
    /// `0x20` (version 2): the collector asks a host to explain detached nodes now.
    case explain(ExplainFrame)
    /// `0x21` (version 2): the end of a host's answer to `explain`.
    case explained(ExplainedFrame)
    /// `0x1C` (version 2): a source location is interned under an id.
    case defineSite(DefineSiteFrame)
    /// `0x1D` (version 2): a test is interned under an id.
    case defineTest(DefineTestFrame)
    /// `0x1E` (version 2): where and under which test a node was attached.
    case nodeOrigin(NodeOriginFrame)
    /// `0x40`: a client's control request.
    case request(ControlRequestFrame)
    /// `0x41`: one part of the collector's response.
    case response(ControlResponseFrame)
    /// `0x42`: an event for a client's subscription.
    case event(ControlEventFrame)

    /// The type byte this message is framed with.
    public var frameType: FrameType {
        switch self {
        case .hello: .hello
        case .helloAccepted: .helloAccepted
        case .helloRefused: .helloRefused
        case .defineString: .defineString
        case .snapshotBegin: .snapshotBegin
        case .snapshotEnd: .snapshotEnd
        case .nodeAttached: .nodeAttached
        case .objectAdded: .objectAdded
        case .stateChanged: .stateChanged
        case .nodeDetached: .nodeDetached
        case .objectReleased: .objectReleased
        case .dropped: .dropped
        case .goodbye: .goodbye
        case .heartbeat: .heartbeat
        case .retainers: .retainers
        case .explain: .explain
        case .explained: .explained
        case .defineSite: .defineSite
        case .defineTest: .defineTest
        case .nodeOrigin: .nodeOrigin
        case .request: .request
        case .response: .response
        case .event: .event
        }
    }
}
