// swift-tools-version:6.1
import PackageDescription

// A tiny app on the Nodes runtime whose test suite leaks one node, for `nodescope check`'s
// end-to-end test (Tests/CheckTests). It depends on the Nodescope package it lives in.
// LEAKY_FIXTURE_CLEAN=1 in the environment fixes the leak, so the same suite can also pass.
let package = Package(
    name: "LeakyPackage",
    dependencies: [
        .package(name: "Nodescope", path: "../../..")
    ],
    targets: [
        .target(name: "LeakyApp", dependencies: [.product(name: "Nodes", package: "Nodescope")]),
        .testTarget(name: "LeakyAppTests", dependencies: ["LeakyApp"]),
        // Five tests marked with NodesTesting's trait (swift-testing) and base class (XCTest):
        // two leak in different ways, one runs beside them, two are clean. LEAKY_FIXTURE_ASSERT=1
        // makes them fail on their own leaks too.
        .testTarget(
            name: "AttributedTests", dependencies: ["LeakyApp", .product(name: "NodesTesting", package: "Nodescope")]),
        .testTarget(
            name: "AttributedXCTests", dependencies: ["LeakyApp", .product(name: "NodesTesting", package: "Nodescope")]),
        // Six ways to leak a node, each with a different holder, for the retainer analysis.
        .executableTarget(name: "leak-ways", dependencies: [.product(name: "Nodes", package: "Nodescope")], path: "Sources/LeakWays"),
    ],
    swiftLanguageModes: [.v6]
)
