/// The collector asks a host to explain, now, what holds the alive objects of some of its
/// detached nodes (protocol version 2, type `0x20`, collector to host). Nodes whose grace has
/// not run out yet are explained too: that is what the request is for.
///
/// The host answers with one ``RetainersFrame`` per alive object of those nodes, then one
/// ``ExplainedFrame`` with the same ``requestID``. A host may take a while (its analysis is
/// bounded, see docs/PROTOCOL.md); the collector keeps at most one request per host open.
///
/// Wire layout: u32 requestID, u16 count, then `count` × u64 nodeID; `count` is 1 to
/// ``maxNodes`` and no node id is 0.
public struct ExplainFrame: Equatable, Sendable {
    /// The most nodes one request may name.
    public static let maxNodes = 16

    /// Chosen by the collector; echoed by the host's ``ExplainedFrame``.
    public var requestID: UInt32
    /// The nodes to explain, at most ``maxNodes`` (the encoder sends the first ones).
    public var nodeIDs: [UInt64]

    /// Creates a request.
    public init(requestID: UInt32, nodeIDs: [UInt64]) {
        self.requestID = requestID
        self.nodeIDs = nodeIDs
    }
}

/// The end of a host's answer to an ``ExplainFrame`` (protocol version 2, type `0x21`, host
/// to collector): the retainers frames of the request came before it.
///
/// Wire layout: u32 requestID, u8 outcome, u16 objectCount.
public struct ExplainedFrame: Equatable, Sendable {
    /// The request answered.
    public var requestID: UInt32
    /// How it went.
    public var outcome: ExplainOutcome
    /// How many retainers frames the answer had.
    public var objectCount: UInt16

    /// Creates the end of an answer.
    public init(requestID: UInt32, outcome: ExplainOutcome, objectCount: UInt16 = 0) {
        self.requestID = requestID
        self.outcome = outcome
        self.objectCount = objectCount
    }
}

/// How a host answered an ``ExplainFrame``.
public enum ExplainOutcome: UInt8, Sendable, CaseIterable {
    /// The alive objects of the nodes named were analysed; their frames came first.
    case explained = 0
    /// None of the nodes named is detached with an object alive in the host (released since,
    /// still attached, or never known).
    case nothingAlive = 1
    /// The host cannot analyse its memory (not Linux, or the analysis is switched off).
    case unavailable = 2
}
