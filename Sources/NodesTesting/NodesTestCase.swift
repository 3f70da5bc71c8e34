#if canImport(XCTest)
import XCTest

/// An XCTest base class that marks every node attached while a test runs with the test (its
/// class and method), so that `nodescope check` reports each leak under the test that made it,
/// and, when ``failsOnNodeLeaks`` is true, fails a test whose node is still alive a grace after
/// its detach, with what holds it.
///
/// ```swift
/// final class ProfileTests: NodesTestCase {
///     override var failsOnNodeLeaks: Bool { true }   // optional: fail the test itself too
///     @MainActor func testClosingTheProfile() async { … }   // flows are @MainActor
/// }
/// ```
///
/// A test class that must keep another base class can do the same in its own `invokeTest()`:
/// `TestIdentity(xcTest: self).run { super.invokeTest() }`.
open class NodesTestCase: XCTestCase {
    /// Whether a test fails on a node it leaked (default false: only `check` reports it).
    open var failsOnNodeLeaks: Bool { false }
    /// How long a detached node may stay alive (default 1 s).
    open var nodeLeakGrace: Duration { .seconds(1) }

    /// Runs the test with its mark bound, then checks its nodes when asked.
    open override func invokeTest() {
        let identity = TestIdentity(xcTest: self)
        if failsOnNodeLeaks { NodeLeakCheck.prepare() }
        identity.run { super.invokeTest() }
        guard failsOnNodeLeaks else { return }
        for leak in NodeLeakCheck.leaksWaiting(of: identity, grace: nodeLeakGrace) {
            recordFailure(
                withDescription: "node leaked: \(leak)", inFile: leak.attachSite?.filePath ?? "\(#filePath)",
                atLine: leak.attachSite.map { Int($0.line) } ?? 0, expected: true)
        }
    }
}

extension TestIdentity {
    /// The identity of an XCTest: its class as the suite, its method as the name.
    public convenience init(xcTest: XCTestCase) {
        // `name` reads `-[Class method]` on Darwin and `Class.method` elsewhere.
        var name = xcTest.name
        if name.hasPrefix("-["), name.hasSuffix("]") { name = String(name.dropFirst(2).dropLast()) }
        let suite = String(describing: type(of: xcTest))
        if let separator = name.firstIndex(where: { $0 == " " || $0 == "." }), name[..<separator] == suite {
            name = String(name[name.index(after: separator)...])
        }
        self.init(suite: suite, name: name, site: nil)
    }
}
#endif
