import Foundation
import ProcessTestSupport
import Testing

/// What an app that depends on the runtime resolves: a scratch consumer package, beside a link to
/// this checkout named as the README names it (`nodescope`), resolved by SwiftPM for real. With
/// the package's traits off, the runtime's products bring no package at all (and `NodesCombine`
/// only OpenCombine); with its default traits, the daemon's and the command's packages come
/// along, which shows that the check can fail.
@Suite("A light dependency on the runtime", .serialized, .offTheCooperativePool)
struct LightDependencyTests {
    static let scratch = URL(fileURLWithPath: "/tmp/nodescope-light-consumer")

    /// The packages that the daemon and the command need and an app must not resolve.
    static let toolsPackages: Set<String> = [
        "swift-nio", "hummingbird", "swift-argument-parser", "swift-log", "swift-service-lifecycle",
        "swift-subprocess", "swift-system", "swift-http-types", "swift-prometheus", "swift-metrics", "swift-protobuf",
        "async-http-client",
    ]

    /// The packages of the export (`daemon --metrics`, `--otlp-endpoint`), behind the `Export` trait
    /// (swift-metrics comes with Hummingbird too, and async-http-client with Hummingbird's testing
    /// library).
    static let exportPackages: Set<String> = ["swift-prometheus", "swift-protobuf"]

    @Test(.timeLimit(.minutes(5)))
    func theRuntimeAndItsTestingLibraryResolveNoPackage() throws {
        let pins = try Self.resolve(traits: "[]", products: ["Nodes", "NodesDebug"], testProducts: ["NodesTesting"])
        #expect(pins == [], "an app of the runtime resolved \(pins.sorted())")
    }

    @Test(.timeLimit(.minutes(5)))
    func theCombineProductResolvesOpenCombineOnly() throws {
        let pins = try Self.resolve(
            traits: "[\"Combine\"]", products: ["Nodes", "NodesCombine"], testProducts: ["NodesTesting"])
        #expect(pins == ["opencombine"], "an app of the runtime with Combine resolved \(pins.sorted())")
    }

    @Test(.timeLimit(.minutes(5)))
    func withTheDefaultTraitsTheToolsPackagesComeAlong() throws {
        let pins = try Self.resolve(traits: nil, products: ["Nodes"], testProducts: [])
        #expect(Self.toolsPackages.isSubset(of: pins), "the default traits resolved only \(pins.sorted())")
    }

    @Test(.timeLimit(.minutes(5)))
    func theToolsWithoutTheExportTraitResolveNoExportPackage() throws {
        let pins = try Self.resolve(traits: "[\"Tools\"]", products: ["Nodes"], testProducts: [])
        #expect(pins.isDisjoint(with: Self.exportPackages), "the tools without Export resolved \(pins.sorted())")
        #expect(pins.contains("swift-nio"), "the tools resolved only \(pins.sorted())")
    }

    /// Writes a consumer whose app target uses `products` and whose test target uses
    /// `testProducts`, depending on this checkout with `traits` (the default traits when nil),
    /// runs `swift package resolve` on it and returns the identities in its Package.resolved.
    static func resolve(traits: String?, products: [String], testProducts: [String]) throws -> Set<String> {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: scratch, withIntermediateDirectories: true)
        try linkCheckout(in: scratch)
        let package = scratch.appendingPathComponent("Consumer")
        try? fileManager.removeItem(at: package)
        for folder in ["Sources/App", "Tests/AppTests"] {
            try fileManager.createDirectory(
                at: package.appendingPathComponent(folder), withIntermediateDirectories: true)
        }
        let dependency = traits.map { ".package(path: \"../nodescope\", traits: \($0))" } ?? ".package(path: \"../nodescope\")"
        func uses(_ names: [String]) -> String {
            names.map { ".product(name: \"\($0)\", package: \"nodescope\")" }.joined(separator: ", ")
        }
        let manifest = """
            // swift-tools-version:6.1
            import PackageDescription

            let package = Package(
                name: "Consumer",
                dependencies: [\(dependency)],
                targets: [
                    .executableTarget(name: "App", dependencies: [\(uses(products))]),
                    .testTarget(name: "AppTests", dependencies: ["App", \(uses(testProducts))]),
                ]
            )

            """
        try manifest.write(to: package.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try "print(\"app\")\n".write(
            to: package.appendingPathComponent("Sources/App/main.swift"), atomically: true, encoding: .utf8)
        try "import Testing\n".write(
            to: package.appendingPathComponent("Tests/AppTests/AppTests.swift"), atomically: true, encoding: .utf8)

        let result = try CheckRunner.run(
            "/usr/bin/env", ["swift", "package", "resolve", "--package-path", package.path], seconds: 240)
        try #require(result.status == 0, "swift package resolve failed:\n\(result.stdout)\n\(result.stderr)")
        return try resolvedIdentities(of: package)
    }
}
