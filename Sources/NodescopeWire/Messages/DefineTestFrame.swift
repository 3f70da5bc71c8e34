/// Interns a test (version 2): one test of a test framework (a swift-testing `@Test`, an
/// XCTest method) under which the host attached nodes. Later frames refer to it by ``testID``.
///
/// Wire layout (type `0x1D`): u32 testID, u32 suiteStringID, u32 nameStringID, u32 siteID.
/// `testID` and `nameStringID` are never 0; `suiteStringID` and `siteID` may be 0 ("none").
public struct DefineTestFrame: Equatable, Sendable {
    /// The id, unique per connection, at least 1.
    public var testID: UInt32
    /// The interned suite (a type's name, such as `ProfileTests`), 0 for a free test function.
    public var suiteStringID: UInt32
    /// The interned test name (such as `closingReleases()` or `testClosingReleases`).
    public var nameStringID: UInt32
    /// Where the test is declared (``DefineSiteFrame``), 0 when unknown.
    public var siteID: UInt32

    /// Creates a test definition.
    public init(testID: UInt32, suiteStringID: UInt32, nameStringID: UInt32, siteID: UInt32) {
        self.testID = testID
        self.suiteStringID = suiteStringID
        self.nameStringID = nameStringID
        self.siteID = siteID
    }
}
