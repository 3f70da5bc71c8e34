// swift-tools-version:6.1
import PackageDescription

// The dependency direction is fixed by DESIGN.md (docs/ARCHITECTURE.md draws it in full):
//   NodesTracking <- NodesRetainers (+ CNodesMemory, NodescopeWire) <- NodesAgent (+ NodescopeWire, NodescopeSocket)
//     <- NodesDebug (the umbrella: re-exports NodesTracking only) <- Nodes <- NodesTesting   (what a host app links: no NIO, no Graphviz)
//   NodescopeWire <- NodescopeCollector <- NodescopeControlCodec <- NodescopeServer, NodescopeControl   (the daemon side)
//   NodescopeSocket <- NodescopeServer, NodescopeControl   (the socket rules, shared; neither imports the host runtime)
let package = Package(
    name: "Nodescope",
    products: [
        .library(name: "Nodes", targets: ["Nodes"]),
        .library(name: "NodesDebug", targets: ["NodesDebug"]),
        .library(name: "NodesTesting", targets: ["NodesTesting"]),
        // Optional: OpenCombine with what the Nodes framework adds to Combine, so that a file written
        // for Combine needs only its import changed. The runtime itself does not use it.
        .library(name: "NodesCombine", targets: ["NodesCombine"]),
        .library(name: "NodescopeWire", targets: ["NodescopeWire"]),
        .library(name: "NodescopeCollector", targets: ["NodescopeCollector"]),
        .library(name: "NodescopeGraphviz", targets: ["NodescopeGraphviz"]),
        .executable(name: "nodescope", targets: ["nodescope"]),
        .executable(name: "sample-nodes", targets: ["sample-nodes"]),
        .executable(name: "sample-ribs", targets: ["sample-ribs"]),
        .executable(name: "sample-viper", targets: ["sample-viper"]),
        .executable(name: "sample-bfg", targets: ["sample-bfg"]),
        .executable(name: "sample-modules", targets: ["sample-modules"]),
    ],
    // Every dependency below is guarded by one of these traits, so that an app that depends on
    // this package with `traits: []` (or `["Combine"]`) resolves and builds none of the daemon's
    // or the command's packages: SwiftPM prunes a dependency that only disabled traits use.
    // Both are on by default, so this package's own `swift build` and `swift test` build all.
    traits: [
        .trait(
            name: "Tools",
            description: "The collector daemon, the nodescope command and the web view, with SwiftNIO, "
                + "Hummingbird, ArgumentParser and the other packages they need. An app needs none of them."),
        .trait(name: "Combine", description: "The NodesCombine product, with OpenCombine."),
        .trait(
            name: "Export",
            description: "The daemon's export into the pipelines teams run (`daemon --metrics`: Prometheus' text format, "
                + "with swift-prometheus). Needs Tools; a build of the tools without it serves no metrics.",
            enabledTraits: ["Tools"]),
        .default(enabledTraits: ["Tools", "Combine", "Export"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-protobuf", from: "1.39.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    ],
    targets: [
        // Message types, framing, encoder and decoder over bytes. Depends on nothing.
        .target(name: "NodescopeWire"),
        // The socket rules that hosts, clients and the daemon share: whether a collector's socket is
        // one only this user controls, a trusted connect, the peer's uid, errno in words; and
        // StandardError, diagnostic lines without SIGPIPE (the agent's log, the runtime's leak
        // handler). No Foundation, no NIO: the agent links it.
        .target(name: "NodescopeSocket"),
        // Tracking: DebugInformation events, stable node ids, the event log, the registry, the
        // generic tracking API, release watching. No wire, no socket, no I/O.
        .target(name: "NodesTracking", dependencies: ["CNodesMemory"]),
        // The retainer analysis: what holds a leaked object, from a conservative scan of the
        // host's own memory (its tests run in a process of their own: NodesRetainersTests).
        .target(name: "NodesRetainers", dependencies: ["NodesTracking", "NodescopeWire", "NodescopeSocket", "CNodesMemory"]),
        // The agent: the tracker's stream to a collector (the link's state machine, the writer
        // thread, the encoders), over the wire and the socket rules.
        .target(name: "NodesAgent", dependencies: ["NodesTracking", "NodesRetainers", "NodescopeWire", "NodescopeSocket"]),
        // The umbrella an app imports: the shared tracker (which starts the agent), the tracking
        // API re-exported, and the agent's app-facing handle; nothing else of the agent.
        .target(name: "NodesDebug", dependencies: ["NodesTracking", "NodesAgent", "NodescopeSocket"]),
        // Safe reads of the host's own memory and the names of its symbols, for the retainer
        // analysis (ProcessMemory, in NodesRetainers), and the two calls the tracking threads make
        // (ThreadStack, BackgroundThread: a stack scrubbed, a thread named).
        .target(name: "CNodesMemory", cSettings: [.define("_GNU_SOURCE")]),
        // The Nodes architecture runtime on Linux (headless views, no UIKit, no Combine).
        .target(name: "Nodes", dependencies: ["NodesDebug"]),
        // Test doubles and release expectations for apps built on the runtime.
        .target(
            name: "NodesTesting", dependencies: ["Nodes", "NodesDebug", "NodesRetainers", "NodescopeWire"]),
        // Combine code on Linux: OpenCombine re-exported, its AnyCancellable a Nodes Cancellable,
        // StateObserver.observe(_:) of a publisher, Publisher.map(Transform), Set.cancelAll.
        .target(
            name: "NodesCombine",
            dependencies: [
                "Nodes", .product(name: "OpenCombine", package: "OpenCombine", condition: .when(traits: ["Combine"])),
                // DispatchQueue as a Scheduler: `.receive(on: DispatchQueue.main)` as generated code writes it.
                .product(name: "OpenCombineDispatch", package: "OpenCombine", condition: .when(traits: ["Combine"])),
            ]),
        // Live trees per host, the leak state machine and queries: pure logic, injected time.
        .target(name: "NodescopeCollector", dependencies: ["NodescopeWire"]),
        // The recording format: writer, reader, index (pure, bytes in and out).
        .target(name: "NodescopeRecording", dependencies: ["NodescopeWire"]),
        // One source for the reading commands and the web view: a collector now, a recording at an
        // instant or a tree in JSON, answering the same questions (TreeSource).
        .target(
            name: "NodescopeSource",
            dependencies: ["NodescopeCollector", "NodescopeControlCodec", "NodescopeControl", "NodescopeReplay", "NodescopeSymbols"]),
        // A recording replayed through the collector's pure model, to any instant.
        .target(name: "NodescopeReplay", dependencies: ["NodescopeRecording", "NodescopeCollector", "NodescopeWire"]),

        // Graphviz's C library (libgvc) and the one Swift type that wraps it: diagrams to SVG or DOT.
        .systemLibrary(name: "CGraphviz", pkgConfig: "libgvc", providers: [.apt(["libgraphviz-dev"])]),
        .target(name: "NodescopeGraphviz", dependencies: ["CGraphviz"]),

        // The control API's bodies, one codec for the daemon and its clients: UTF-8 JSON of the
        // collector's query types, the tree written and read by hand (TreeJSON, TreeJSONReader).
        .target(name: "NodescopeControlCodec", dependencies: ["NodescopeCollector"]),

        // The daemon: SwiftNIO Unix-socket server for hosts and clients, logging, lifecycle.
        .target(
            name: "NodescopeServer",
            dependencies: [
                "NodescopeCollector", "NodescopeWire", "NodescopeControlCodec", "NodescopeRecording", "NodescopeSocket",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Tools"])),
            ]),

        // The control API's client side: a client that reaches a collector only after the socket
        // trust checks, every answer with a deadline.
        .target(
            name: "NodescopeControl",
            dependencies: [
                "NodescopeCollector", "NodescopeControlCodec", "NodescopeWire", "NodescopeSocket",
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Tools"])),
            ]),

        // Leak reports, pure: one model built by `check` and `leaks`, the baseline, and the
        // writers (text, JSON, JUnit, SARIF, diagrams of leaks), in one vocabulary.
        .target(name: "NodescopeReports", dependencies: ["NodescopeCollector", "NodescopeGraphviz"]),

        // A stored closure named from where its code is (a ClosureSite): the ELF symbol table,
        // the demangler and llvm-symbolizer, bounded and cached (Foundation, child processes).
        .target(name: "NodescopeSymbols", dependencies: ["NodescopeWire"]),

        // What the tools' HTTP servers keep a client from making them hold: connections, places
        // for work, the time to send a request (the web view's and the metrics endpoint's).
        .target(
            name: "NodescopeHTTPGuard",
            dependencies: [
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Tools"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
            ]),

        // The web view: a read-only page and HTTP API on loopback, a control client of the
        // collector like the CLI (Hummingbird; the page is plain HTML, CSS and JavaScript,
        // compiled into the binary).
        .target(
            name: "NodescopeWeb",
            dependencies: [
                "NodescopeCollector", "NodescopeControl", "NodescopeControlCodec", "NodescopeReports", "NodescopeGraphviz",
                "NodescopeRecording", "NodescopeReplay", "NodescopeSource", "NodescopeHTTPGuard",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Tools"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Tools"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Tools"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
            ],
            resources: [.embedInCode("Page/index.html"), .embedInCode("Page/app.js"), .embedInCode("Page/app.css")]),

        // Export into the pipelines teams already run: the daemon's counts in Prometheus' text
        // format on an HTTP endpoint of its own (`daemon --metrics`). An edge, like the web view:
        // it reads what the daemon hands it and changes nothing.
        // OTLP's messages, generated by tools/generate-otlp from the OpenTelemetry project's
        // definitions (opentelemetry-proto); built only with the Export trait.
        .target(
            name: "NodescopeOTLPProto",
            dependencies: [.product(name: "SwiftProtobuf", package: "swift-protobuf", condition: .when(traits: ["Export"]))]),
        .target(
            name: "NodescopeExport",
            dependencies: [
                "NodescopeCollector", "NodescopeHTTPGuard", "NodescopeReports",
                .target(name: "NodescopeOTLPProto", condition: .when(traits: ["Export"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Export"])),
                .product(name: "SwiftProtobuf", package: "swift-protobuf", condition: .when(traits: ["Export"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["Export"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Export"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Export"])),
                .product(name: "HummingbirdCore", package: "hummingbird", condition: .when(traits: ["Export"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Export"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Export"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Export"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Export"])),
            ]),

        // The CLI's commands as a testable library, and the thin executable.
        .target(
            name: "NodescopeCommands",
            dependencies: [
                "NodescopeServer", "NodescopeControl", "NodescopeControlCodec", "NodescopeReports", "NodescopeCollector",
                "NodescopeWire",
                "NodescopeGraphviz", "NodescopeSocket", "NodescopeWeb", "NodescopeRecording", "NodescopeReplay",
                "NodescopeSource", "NodescopeExport",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Tools"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Tools"])),
                .product(name: "Subprocess", package: "swift-subprocess", condition: .when(traits: ["Tools"])),
                .product(name: "SystemPackage", package: "swift-system", condition: .when(traits: ["Tools"])),
            ]),
        .executableTarget(
            name: "nodescope",
            dependencies: [
                "NodescopeCommands",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Tools"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
            ]),

        // Sample host apps, one per seed architecture (Samples/README.md); each links only the
        // light runtime and SampleSupport (their shared command line), and is tested by running it.
        .target(name: "SampleSupport", dependencies: ["NodesDebug"], path: "Samples/SampleSupport"),
        .executableTarget(
            name: "sample-nodes", dependencies: ["Nodes", "SampleSupport"], path: "Samples/sample-nodes",
            exclude: ["README.md"]),
        .executableTarget(
            name: "sample-ribs", dependencies: ["NodesDebug", "SampleSupport"], path: "Samples/sample-ribs",
            exclude: ["README.md"]),
        .executableTarget(
            name: "sample-viper", dependencies: ["NodesDebug", "SampleSupport"], path: "Samples/sample-viper",
            exclude: ["README.md"]),
        .executableTarget(
            name: "sample-bfg", dependencies: ["NodesDebug", "SampleSupport"], path: "Samples/sample-bfg",
            exclude: ["README.md"]),
        .executableTarget(
            name: "sample-modules", dependencies: ["NodesDebug", "SampleSupport"], path: "Samples/sample-modules",
            exclude: ["README.md"]),

        // The benchmarks behind docs/BENCHMARKS.md (run them with -c release).
        .executableTarget(
            name: "nodescope-bench",
            dependencies: [
                "Nodes", "NodesRetainers", "NodescopeWire", "NodescopeCollector", "NodescopeServer", "NodescopeGraphviz",
                "NodescopeRecording", "NodescopeReplay", "NodescopeReports", "NodescopeExport",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
            ],
            path: "Benchmarks/NodescopeBench"),

        // Real processes for the agent's end-to-end tests: a scripted host and a minimal listener.
        .target(name: "SeededRandom", path: "Tests/Support/SeededRandom"),
        .executableTarget(name: "test-host", dependencies: ["Nodes", "SeededRandom"], path: "Tests/Support/TestHost"),
        .executableTarget(name: "test-listener", dependencies: ["NodescopeWire"], path: "Tests/Support/TestListener"),

        .testTarget(name: "NodescopeWireTests", dependencies: ["NodescopeWire", "SeededRandom"], exclude: ["Fixtures"]),
        .testTarget(name: "NodesDebugTests", dependencies: ["NodesDebug", "NodesTracking", "NodesTesting", "SeededRandom"]),
        // The retainer analyses scan this very test process's memory, beside every other test.
        .testTarget(
            name: "NodesRetainersTests",
            dependencies: [
                "NodesRetainers", "NodesTracking", "NodesDebug", "NodescopeWire", "SeededRandom", "ProcessTestSupport",
            ]),
        .testTarget(name: "NodescopeSocketTests", dependencies: ["NodescopeSocket"]),
        .testTarget(
            name: "NodescopeGraphvizTests", dependencies: ["NodescopeGraphviz", "SeededRandom", "ProcessTestSupport"],
            exclude: ["Snapshots"]),
        .testTarget(name: "NodesTests", dependencies: ["Nodes", "NodesTesting"]),
        .testTarget(name: "NodesCombineTests", dependencies: ["NodesCombine", "Nodes"]),
        .testTarget(name: "NodescopeCollectorTests", dependencies: ["NodescopeCollector", "SeededRandom"]),
        .testTarget(
            name: "NodescopeControlCodecTests", dependencies: ["NodescopeControlCodec", "NodescopeCollector", "SeededRandom"]),
        .testTarget(
            name: "NodescopeServerTests",
            dependencies: [
                "NodescopeServer", "NodescopeControl", "NodescopeControlCodec", "NodescopeCollector", "NodescopeWire",
                "SeededRandom", "NodescopeRecording", "NodescopeReplay",
                .product(name: "NIOEmbedded", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Tools"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tools"])),
                .product(name: "InMemoryLogging", package: "swift-log", condition: .when(traits: ["Tools"])),
            ]),
        .testTarget(
            name: "NodescopeRecordingTests",
            dependencies: ["NodescopeRecording", "NodescopeReplay", "NodescopeCollector", "NodescopeWire", "SeededRandom"]),
        .testTarget(
            name: "NodescopeExportTests",
            dependencies: [
                "NodescopeExport", "NodescopeCollector", "NodescopeReports",
                .target(name: "NodescopeOTLPProto", condition: .when(traits: ["Export"])),
                .product(name: "SwiftProtobuf", package: "swift-protobuf", condition: .when(traits: ["Export"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Export"])),
            ]),
        .testTarget(
            name: "NodescopeReportsTests", dependencies: ["NodescopeReports", "NodescopeCollector", "ProcessTestSupport"]),
        .testTarget(
            name: "NodescopeSymbolsTests", dependencies: ["NodescopeSymbols", "NodescopeWire", "ProcessTestSupport", "sample-nodes"]),
        .testTarget(
            name: "NodescopeWebTests",
            dependencies: [
                "NodescopeWeb", "NodescopeSource", "NodescopeRecording", "NodescopeReplay", "NodescopeCollector", "NodescopeWire",
                "NodescopeHTTPGuard",
            ]),
        .target(name: "ProcessTestSupport", path: "Tests/Support/ProcessTestSupport"),
        .testTarget(
            name: "NodescopeAgentTests",
            dependencies: [
                "NodesDebug", "NodesTracking", "NodesRetainers", "NodesAgent", "NodescopeWire", "NodesTesting", "ProcessTestSupport",
                "test-host", "test-listener", "sample-nodes",
                "sample-ribs", "sample-viper", "sample-bfg", "sample-modules",
            ]),
        .testTarget(
            name: "NodescopeEndToEndTests",
            dependencies: [
                "NodescopeCollector", "NodescopeRecording", "NodescopeServer", "NodescopeWire", "ProcessTestSupport", "nodescope",
                "test-host", "sample-nodes", "SeededRandom",
            ]),
        .testTarget(
            name: "SamplesTests",
            dependencies: [
                "NodescopeCollector", "ProcessTestSupport", "SampleSupport", "nodescope",
                "sample-nodes", "sample-ribs", "sample-viper", "sample-bfg", "sample-modules",
            ]),
        // nodescope check end to end (real processes, a fixture package under Tests/Fixtures),
        // its baseline and reports, and NodesTesting's release expectations.
        .testTarget(
            name: "CheckTests",
            dependencies: [
                "NodescopeCollector", "NodescopeCommands", "NodescopeReports", "NodescopeWire", "NodesTesting", "ProcessTestSupport",
                "nodescope", "sample-nodes", "test-host",
            ]),
    ],
    swiftLanguageModes: [.v6]
)
