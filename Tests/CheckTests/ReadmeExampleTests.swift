import Foundation
import ProcessTestSupport
import Testing

/// The README's test examples, run as written: tools/check-readme puts every block of the README
/// into its example package (.build/check-readme/MyApp), and here its tests run, once on the
/// app as the README writes it (they pass) and once with a leak put into the profile node (they
/// fail, naming what is alive). So the examples cannot drift, and they are shown to catch a leak.
@Suite("The README's test examples", .serialized, .offTheCooperativePool)
struct ReadmeExampleTests {
    static let example = repositoryRoot.appendingPathComponent(".build/check-readme/MyApp")
    /// Where the leaky copy lives, kept between runs so that only the first build is slow.
    static let leaky = URL(fileURLWithPath: "/tmp/nodescope-readme-leak")

    /// The README's line and the statement put after it: the profile's context, once active,
    /// keeps itself in a global array, so closing the profile leaves its context alive.
    static let activation = "override func didBecomeActive() {"
    static let leak = "\n        injectedLeaks.append(self)"
    static let global = "\nnonisolated(unsafe) var injectedLeaks: [AnyObject] = []\n"

    @Test(.timeLimit(.minutes(10)))
    func theExamplesPassOnTheAppAndCatchALeakPutIntoIt() throws {
        let readme = try CheckRunner.run(repositoryRoot.appendingPathComponent("tools/check-readme").path, [], seconds: 560)
        try #require(readme.status == 0, "tools/check-readme:\n\(readme.stdout)\n\(readme.stderr)")

        let clean = try CheckRunner.run(
            "/usr/bin/env", ["swift", "test", "--package-path", Self.example.path], seconds: 300)
        #expect(clean.status == 0, "\(clean.stdout)\n\(clean.stderr)")
        #expect(clean.stdout.contains("✔ Test closingTheProfileReleasesItsNode() passed"), "\(clean.stdout)")
        #expect(clean.stdout.contains("✔ Test openingAndClosingTheProfileLeaksNothing() passed"), "\(clean.stdout)")

        // The same package with the leak: a copy beside a link to this checkout, as the README's
        // manifest expects (`.package(path: "../nodescope")`).
        let fileManager = FileManager.default
        let package = Self.leaky.appendingPathComponent("MyApp")
        try? fileManager.removeItem(at: package)
        try fileManager.createDirectory(at: package, withIntermediateDirectories: true)
        for item in ["Package.swift", "Sources", "Tests", "ReadmePrograms"] {
            try fileManager.copyItem(at: Self.example.appendingPathComponent(item), to: package.appendingPathComponent(item))
        }
        try linkCheckout(in: Self.leaky)
        let profile = package.appendingPathComponent("Sources/MyApp/ProfileNode.swift")
        let source = try String(contentsOf: profile, encoding: .utf8)
        try #require(source.contains(Self.activation), "the README's profile node no longer has \(Self.activation)")
        try (source.replacingOccurrences(of: Self.activation, with: Self.activation + Self.leak) + Self.global)
            .write(to: profile, atomically: true, encoding: .utf8)

        let leaking = try CheckRunner.run(
            "/usr/bin/env",
            ["swift", "test", "--package-path", package.path, "--scratch-path", Self.leaky.appendingPathComponent("build").path],
            seconds: 500)
        let output = leaking.stdout + leaking.stderr
        #expect(leaking.status != 0, "\(output)")
        #expect(output.contains("✘ Test closingTheProfileReleasesItsNode() recorded an issue"), "\(output)")
        #expect(output.contains("ProfileFlow: still alive after 1000 ms: context ProfileContext"), "\(output)")
        #expect(output.contains("✘ Test openingAndClosingTheProfileLeaksNothing() recorded an issue"), "\(output)")
        #expect(output.contains("ProfileContextImp still alive"), "\(output)")
    }
}
