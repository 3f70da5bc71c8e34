import Synchronization

/// The test a node was attached under: its suite, its name and where it is declared.
///
/// Test frameworks bind one for the duration of each test (``run(_:)``, task-local, so tests
/// running in parallel stay apart); every node attached while it is bound, on that task or on
/// tasks it creates, carries it, and `nodescope check` reports the node's leaks under that test.
/// `NodesTesting` binds it for swift-testing (the `.trackingNodes` trait) and XCTest
/// (`NodesTestCase`); any other framework can do it with ``run(_:)``.
public final class TestIdentity: Sendable, Hashable, CustomStringConvertible {
    /// The test bound to the current task, if any.
    @TaskLocal public static var current: TestIdentity?

    /// The suite: the type that declares the test (`ProfileTests`), or empty for a free function.
    public let suite: String
    /// The test's name (`closingReleasesTheNode()`, `testClosingReleasesTheNode`).
    public let name: String
    /// Where the test is declared (its file and line), when known.
    public let site: AttachSite?
    /// A number unique in the process (identities are compared by it).
    public let id: UInt64

    private static let nextID = Atomic<UInt64>(1)

    /// ``current``, looked up only once an identity was ever made: an app that runs no tests
    /// never pays for the task-local lookup at each attach. (An identity is made before it is
    /// bound, on the binding thread or one its tasks inherit from, which so sees the count.)
    static var currentIfAny: TestIdentity? {
        nextID.load(ordering: .relaxed) > 1 ? current : nil
    }

    /// A test of `suite` named `name`, declared at `site`.
    public init(suite: String, name: String, site: AttachSite?) {
        self.suite = suite
        self.name = name
        self.site = site
        self.id = Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// Runs `body` with this test as the current one.
    public func run<T>(_ body: () throws -> T) rethrows -> T {
        try Self.$current.withValue(self, operation: body)
    }

    /// Runs `body` with this test as the current one.
    public func run<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async rethrows -> T {
        try await Self.$current.withValue(self, operation: body, isolation: isolation)
    }

    /// `ProfileTests/closingReleasesTheNode()`, or the name alone without a suite.
    public var description: String { suite.isEmpty ? name : "\(suite)/\(name)" }

    public static func == (lhs: TestIdentity, rhs: TestIdentity) -> Bool { lhs.id == rhs.id }

    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

/// Where and under which test a node was attached.
public struct NodeOrigin: Sendable, Equatable {
    /// The attach site, when the caller's was captured.
    public var site: AttachSite?
    /// The test bound when the node was attached.
    public var test: TestIdentity?

    /// An origin.
    public init(site: AttachSite?, test: TestIdentity?) {
        self.site = site
        self.test = test
    }

    /// Nothing known.
    public static let unknown = NodeOrigin(site: nil, test: nil)
}
