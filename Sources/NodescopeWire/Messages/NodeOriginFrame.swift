/// Where and under which test a node was attached (version 2). It follows the node's
/// `nodeAttached` frame, in snapshots and deltas alike; it is not an event (no sequence, no time).
///
/// Wire layout (type `0x1E`): u64 nodeID, u32 siteID, u32 testID. The node id is never 0; the
/// site and the test may be 0 ("unknown", "not under a test").
public struct NodeOriginFrame: Equatable, Sendable {
    /// The node, at least 1.
    public var nodeID: UInt64
    /// The attach site (``DefineSiteFrame``), 0 when unknown.
    public var siteID: UInt32
    /// The test the node was attached under (``DefineTestFrame``), 0 for none.
    public var testID: UInt32

    /// Creates a node's origin.
    public init(nodeID: UInt64, siteID: UInt32, testID: UInt32) {
        self.nodeID = nodeID
        self.siteID = siteID
        self.testID = testID
    }
}
