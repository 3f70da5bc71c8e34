import Testing

/// A swift-testing trait that marks every node attached while a test runs with the test (its
/// suite, name and source location), so that `nodescope check` reports each leak under the test
/// that made it: a JUnit test case per test, SARIF results with the test as a related location.
/// The mark is task-local: tests that run in parallel stay apart, and tasks a test creates carry
/// its mark.
///
/// Per test, per suite (it applies to every test inside, nested suites included), or for a
/// whole target by putting the target's suites inside one marked suite:
///
/// ```swift
/// @Suite(.trackingNodes) struct ProfileTests {
///     @Test func closingTheProfile() { … }
/// }
/// @Test(.trackingNodes(failingOnLeaks: true)) func closingTheSettings() { … }
/// ```
///
/// With `failingOnLeaks`, the test itself fails when a node it attached (and detached) is still
/// alive a grace after its detach, with what holds it; without a collector too.
public struct NodeTrackingTrait: TestTrait, SuiteTrait, TestScoping {
    /// Whether a test fails on a node it leaked.
    public var failsOnLeaks: Bool
    /// How long a detached node may stay alive.
    public var grace: Duration

    /// Applies to each test of a suite, nested suites included.
    public var isRecursive: Bool { true }

    /// Runs `function` with the test's mark bound; then, when asked, checks the test's nodes.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        let identity = TestIdentity(test)
        if failsOnLeaks { NodeLeakCheck.prepare() }
        try await TestIdentity.$current.withValue(identity) { try await function() }
        guard failsOnLeaks else { return }
        for leak in await NodeLeakCheck.leaks(of: identity, grace: grace) {
            Issue.record(
                Comment(rawValue: "node leaked: \(leak)"),
                sourceLocation: leak.attachSite.map { SourceLocation($0) } ?? test.sourceLocation)
        }
    }
}

extension Trait where Self == NodeTrackingTrait {
    /// Marks the nodes attached by each test with the test (see ``NodeTrackingTrait``).
    public static var trackingNodes: Self { NodeTrackingTrait(failsOnLeaks: false, grace: .seconds(1)) }

    /// Marks the nodes attached by each test with the test, and, when `failingOnLeaks`, fails a
    /// test whose node is still alive `grace` after its detach.
    public static func trackingNodes(failingOnLeaks: Bool, grace: Duration = .seconds(1)) -> Self {
        NodeTrackingTrait(failsOnLeaks: failingOnLeaks, grace: grace)
    }
}

extension TestIdentity {
    /// The identity of a swift-testing test: its suite (the names of the types around it), its
    /// name and its source location.
    public convenience init(_ test: Test) {
        let components = test.id.nameComponents
        let suite = components.count > 1 ? components.dropLast().joined(separator: ".") : ""
        let location = test.sourceLocation
        self.init(suite: suite, name: test.name, site: AttachSite(filePath: location.filePath, line: location.line))
    }
}

extension SourceLocation {
    /// The source location of an attach site, for an issue recorded there.
    init(_ site: AttachSite) {
        let path = site.filePath
        let name = site.fileName
        let module = path.split(separator: "/").dropLast().last.map(String.init) ?? "?"
        self.init(fileID: "\(module)/\(name)", filePath: path, line: Int(site.line), column: 1)
    }
}
