// swift-tools-version:6.1
import Foundation
import PackageDescription

// SwiftPM names a package dependency by path after its folder: whatever the checkout is called.
let nodescope = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent

// The host's benchmarks on ordo-one/benchmark, with thresholds that fail a regression
// (`swift package benchmark thresholds check`, which `tools/bench check` and CI run). A package of
// its own, so that the main package does not depend on the benchmark framework (as swift-nio
// does). The figures of docs/BENCHMARKS.md come from `tools/bench`.
let package = Package(
    name: "NodescopeBenchmarks",
    dependencies: [
        // The runtime alone (no daemon or command packages): the benchmarks measure the host.
        .package(path: "..", traits: []),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HostBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Nodes", package: nodescope),
                .product(name: "NodescopeWire", package: nodescope),
            ],
            path: "Benchmarks/HostBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        )
    ]
)
