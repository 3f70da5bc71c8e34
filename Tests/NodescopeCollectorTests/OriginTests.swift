import Foundation
import NodescopeCollector
import NodescopeWire
import Testing

/// Attach sites and tests (protocol version 2): `defineSite`, `defineTest` and `nodeOrigin` on
/// nodes and leak records.
@Suite("Attach sites and tests on nodes and leak records")
struct OriginTests {
    /// Strings 100…103 and site 1 (ProfileFlow.swift:42), site 2 (the test's declaration), test 1.
    static let definitions: [WireMessage] = [
        .defineString(DefineStringFrame(stringID: 100, value: "/repo/Sources/App/ProfileFlow.swift")),
        .defineString(DefineStringFrame(stringID: 101, value: "/repo/Tests/AppTests/ProfileTests.swift")),
        .defineString(DefineStringFrame(stringID: 102, value: "ProfileTests")),
        .defineString(DefineStringFrame(stringID: 103, value: "closingReleases()")),
        .defineSite(DefineSiteFrame(siteID: 1, fileStringID: 100, line: 42)),
        .defineSite(DefineSiteFrame(siteID: 2, fileStringID: 101, line: 7)),
        .defineTest(DefineTestFrame(testID: 1, suiteStringID: 102, nameStringID: 103, siteID: 2)),
    ]

    static let site = SourceSite(file: "/repo/Sources/App/ProfileFlow.swift", line: 42)
    static let test = TestInfo(
        suite: "ProfileTests", name: "closingReleases()", location: SourceSite(file: "/repo/Tests/AppTests/ProfileTests.swift", line: 7))

    @Test func aNodeAndItsLeakRecordCarryTheSiteAndTheTest() throws {
        var host = Harness()
        _ = try host.attach(1, kind: "AppFlow")
        _ = try host.send(Self.definitions)
        _ = try host.attach(2, parent: 1, kind: "ProfileFlow", objects: ["flow", "context"])
        _ = try host.send([.nodeOrigin(NodeOriginFrame(nodeID: 2, siteID: 1, testID: 1))])
        #expect(host.node(2)?.attachSite == Self.site)
        #expect(host.node(2)?.attachSite?.description == "ProfileFlow.swift:42")
        #expect(host.node(2)?.test == Self.test)
        #expect(host.node(1)?.attachSite == nil && host.node(1)?.test == nil)

        _ = try host.release(2, 0)
        _ = try host.detach(2)
        _ = host.advance(to: host.now + Harness.second)
        let record = try #require(host.leaks.first)
        #expect(record.attachSite == Self.site)
        #expect(record.test == Self.test)
        #expect(record.test?.description == "ProfileTests/closingReleases()")
    }

    @Test func originsSurviveASnapshot() throws {
        var host = Harness()
        _ = try host.send(Self.definitions)
        _ = try host.send([
            .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 1)),
            .defineString(DefineStringFrame(stringID: 1, value: "AppFlow")),
            .nodeAttached(
                NodeAttachedFrame(sequence: 0, timeNanos: host.hostNow, nodeID: 9, parentID: 0, kindStringID: 1, nameStringID: 0)),
            .nodeOrigin(NodeOriginFrame(nodeID: 9, siteID: 1, testID: 0)),
            .snapshotEnd(sequence: 0),
        ])
        #expect(host.node(9)?.attachSite == Self.site)
        #expect(host.node(9)?.test == nil)
    }

    @Test func undefinedOrUnknownIdsAreViolations() throws {
        var host = Harness()
        _ = try host.attach(1, kind: "AppFlow")
        #expect(throws: SessionError.self) { try host.send([.nodeOrigin(NodeOriginFrame(nodeID: 1, siteID: 5, testID: 0))]) }
        var other = Harness()
        _ = try other.attach(1, kind: "AppFlow")
        #expect(throws: SessionError.self) { try other.send([.nodeOrigin(NodeOriginFrame(nodeID: 7, siteID: 0, testID: 0))]) }
        var third = Harness()
        #expect(throws: SessionError.self) { try third.send([.defineSite(DefineSiteFrame(siteID: 1, fileStringID: 77, line: 1))]) }
        var fourth = Harness()
        _ = try fourth.send(Self.definitions)
        #expect(throws: SessionError.self) { try fourth.send([.defineSite(DefineSiteFrame(siteID: 1, fileStringID: 100, line: 1))]) }
    }

    @Test func theControlAPIsJSONCarriesThem() throws {
        let info = NodeInfo(
            id: 2, parent: 1, kind: "Flow", name: "ProfileFlow", status: .active, objects: [], attachedAtNanos: 1,
            detachedAtNanos: nil, depth: 1, attachSite: Self.site, test: Self.test)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let json = String(decoding: try encoder.encode(info), as: UTF8.self)
        #expect(json.contains(#""attachSite":{"file":"\/repo\/Sources\/App\/ProfileFlow.swift","line":42}"#))
        #expect(json.contains(#""test":{"location""#))
        #expect(try JSONDecoder().decode(NodeInfo.self, from: Data(json.utf8)) == info)
    }
}
