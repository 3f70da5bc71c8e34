// swift-tools-version:6.1
import PackageDescription

// An app whose nodes are written as the Nodes framework's code generator renders them (its Stencil
// templates, the "Custom" UI framework), on Nodescope's runtime, for `nodescope check`'s
// end-to-end test (Tests/CheckTests/GeneratedNodeTests.swift). See README.md.
// GENERATED_FIXTURE_LEAK=1 in the environment makes the Account node leak when it is closed.
let package = Package(
    name: "GeneratedNodePackage",
    dependencies: [
        // Only the Combine trait: the runtime and OpenCombine, none of the daemon's or CLI's packages.
        .package(name: "Nodescope", path: "../../..", traits: ["Combine"]),
        .package(url: "https://github.com/Quick/Nimble", from: "14.0.0"),
    ],
    targets: [
        // The app's own UI framework (the generator's "Custom" UI framework): a view controller base class.
        .target(name: "AppUI", dependencies: [.product(name: "Nodes", package: "Nodescope")]),
        // The app: a root node and the generated-shape Account node, worker, plugin and plugin list.
        .target(
            name: "GeneratedApp",
            dependencies: [
                "AppUI",
                .product(name: "Nodes", package: "Nodescope"),
                .product(name: "NodesCombine", package: "Nodescope"),
            ]),
        // The generated tests, and one lifecycle test that `nodescope check` gates. Swift 5 mode, as the
        // Nodes framework builds its own tests (in Swift 6 mode `try await super.setUp()` from a
        // `@MainActor` override sends the non-Sendable test case).
        .testTarget(
            name: "GeneratedAppTests",
            dependencies: [
                "GeneratedApp",
                "AppUI",
                .product(name: "Nodes", package: "Nodescope"),
                .product(name: "NodesCombine", package: "Nodescope"),
                .product(name: "NodesTesting", package: "Nodescope"),
                .product(name: "Nimble", package: "Nimble"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]),
    ],
    swiftLanguageModes: [.v6]
)
