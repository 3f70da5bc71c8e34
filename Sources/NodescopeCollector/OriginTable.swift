import NodescopeWire

/// The attach sites and tests a host defined on its connection (protocol version 2), by id.
///
/// Sites and tests refer to interned strings; both tables are bounded, as strings are.
struct OriginTable {
    struct Site {
        var file: UInt32
        var line: UInt32
    }

    struct Test {
        var suite: UInt32
        var name: UInt32
        var site: UInt32
    }

    /// The most sites, and the most tests, one session may define.
    static let maxEntries = 1_000_000

    private(set) var sites: [UInt32: Site] = [:]
    private(set) var tests: [UInt32: Test] = [:]

    mutating func define(site id: UInt32, _ site: Site) { sites[id] = site }
    mutating func define(test id: UInt32, _ test: Test) { tests[id] = test }
}

extension HostSession {
    mutating func defineSite(_ frame: DefineSiteFrame) throws(SessionError) {
        guard frame.siteID != 0, origins.sites[frame.siteID] == nil else {
            throw SessionError(.duplicateString, "defineSite redefines site id \(frame.siteID) (or uses 0)")
        }
        try checkString(frame.fileStringID, optional: false, "file", of: "defineSite")
        guard origins.sites.count < OriginTable.maxEntries else {
            throw SessionError(.tooManyStrings, "the host defined more than \(OriginTable.maxEntries) attach sites")
        }
        origins.define(site: frame.siteID, .init(file: frame.fileStringID, line: frame.line))
    }

    mutating func defineTest(_ frame: DefineTestFrame) throws(SessionError) {
        guard frame.testID != 0, origins.tests[frame.testID] == nil else {
            throw SessionError(.duplicateString, "defineTest redefines test id \(frame.testID) (or uses 0)")
        }
        try checkString(frame.suiteStringID, optional: true, "suite", of: "defineTest")
        try checkString(frame.nameStringID, optional: false, "name", of: "defineTest")
        try checkSite(frame.siteID, of: "defineTest")
        guard origins.tests.count < OriginTable.maxEntries else {
            throw SessionError(.tooManyStrings, "the host defined more than \(OriginTable.maxEntries) tests")
        }
        origins.define(test: frame.testID, .init(suite: frame.suiteStringID, name: frame.nameStringID, site: frame.siteID))
    }

    /// Sets a node's attach site and test, outside a snapshot; a node this session removed as
    /// released is tolerated (nothing changes).
    mutating func noteOrigin(_ frame: NodeOriginFrame) throws(SessionError) {
        try checkOrigin(frame)
        guard let slot = tree.slot(of: frame.nodeID), !tree.slots[Int(slot)].isPlaceholder else {
            if removed.contains(frame.nodeID) { return }
            throw SessionError(.unknownNode, "nodeOrigin names node \(frame.nodeID), which is not in the tree")
        }
        tree.slots[Int(slot)].site = frame.siteID
        tree.slots[Int(slot)].test = frame.testID
    }

    /// Sets the attach site and test of a node of the snapshot being received.
    func noteOrigin(_ frame: NodeOriginFrame, into build: inout SnapshotBuild) throws(SessionError) {
        try checkOrigin(frame)
        guard let slot = build.tree.slot(of: frame.nodeID), !build.tree.slots[Int(slot)].isPlaceholder else {
            throw SessionError(.unknownNode, "nodeOrigin names node \(frame.nodeID), not yet in the snapshot")
        }
        build.tree.slots[Int(slot)].site = frame.siteID
        build.tree.slots[Int(slot)].test = frame.testID
    }

    private func checkOrigin(_ frame: NodeOriginFrame) throws(SessionError) {
        try checkSite(frame.siteID, of: "nodeOrigin")
        if frame.testID != 0, origins.tests[frame.testID] == nil {
            throw SessionError(.unknownString, "nodeOrigin uses test id \(frame.testID) before its defineTest")
        }
    }

    private func checkSite(_ siteID: UInt32, of frame: String) throws(SessionError) {
        if siteID != 0, origins.sites[siteID] == nil {
            throw SessionError(.unknownString, "\(frame) uses site id \(siteID) before its defineSite")
        }
    }

    /// The location of a site id, nil for 0.
    func location(ofSite id: UInt32) -> SourceSite? {
        guard id != 0, let site = origins.sites[id] else { return nil }
        return SourceSite(file: strings.text(site.file), line: site.line)
    }

    /// Every test the host defined, in id order.
    func definedTests() -> [TestInfo] {
        origins.tests.keys.sorted().compactMap { testInfo($0) }
    }

    /// The test of a test id, nil for 0.
    func testInfo(_ id: UInt32) -> TestInfo? {
        guard id != 0, let test = origins.tests[id] else { return nil }
        return TestInfo(
            suite: test.suite == 0 ? "" : strings.text(test.suite), name: strings.text(test.name),
            location: location(ofSite: test.site))
    }
}
