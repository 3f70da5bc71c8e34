// swift-tools-version:6.1
import PackageDescription

// The dependency direction is fixed by DESIGN.md:
//   NodescopeWire  <- NodesDebug <- Nodes <- NodesTesting      (what a host app links: no NIO, no Graphviz)
//   NodescopeWire  <- NodescopeCollector <- NodescopeServer    (the daemon side)
let package = Package(
    name: "Nodescope",
    products: [
        .library(name: "Nodes", targets: ["Nodes"]),
        .library(name: "NodesDebug", targets: ["NodesDebug"]),
        .library(name: "NodesTesting", targets: ["NodesTesting"]),
        .library(name: "NodescopeWire", targets: ["NodescopeWire"]),
        .executable(name: "sample-nodes", targets: ["sample-nodes"]),
    ],
    targets: [
        // Message types, framing, encoder and decoder over bytes. Depends on nothing.
        .target(name: "NodescopeWire"),
        // DebugInformation events, stable node ids, the generic tracking API, release watching.
        .target(name: "NodesDebug", dependencies: ["NodescopeWire"]),
        // The Nodes architecture runtime on Linux (headless views, no UIKit, no Combine).
        .target(name: "Nodes", dependencies: ["NodesDebug"]),
        // Test doubles and release expectations for apps built on the runtime.
        .target(name: "NodesTesting", dependencies: ["Nodes"]),

        .executableTarget(name: "sample-nodes", dependencies: ["Nodes"], path: "Samples/sample-nodes"),

        // Real processes for the agent's end-to-end tests: a scripted host and a minimal listener.
        .executableTarget(name: "test-host", dependencies: ["Nodes"], path: "Tests/Support/TestHost"),
        .executableTarget(name: "test-listener", dependencies: ["NodescopeWire"], path: "Tests/Support/TestListener"),

        .testTarget(name: "NodescopeWireTests", dependencies: ["NodescopeWire"], exclude: ["Fixtures"]),
        .testTarget(name: "NodesDebugTests", dependencies: ["NodesDebug", "NodesTesting"]),
        .testTarget(name: "NodesTests", dependencies: ["Nodes", "NodesTesting"]),
        .testTarget(
            name: "NodescopeAgentTests",
            dependencies: ["NodesDebug", "NodescopeWire", "NodesTesting", "test-host", "test-listener"]),
    ],
    swiftLanguageModes: [.v6]
)
