import Foundation

// nodescope-bench: the benchmarks behind docs/BENCHMARKS.md.
// Usage: nodescope-bench [host] [collector] [recording] [render] [retainers] [export] [export-ingest] [--quick]     (build with -c release; see docs/BENCHMARKS.md)
let arguments = Set(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let all = arguments.subtracting(["--quick"]).isEmpty

if CommandLine.arguments.count > 2, CommandLine.arguments[1] == "memory-probe" {
    memoryProbe(count: Int(CommandLine.arguments[2]) ?? 100_000)
    exit(0)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "tree-host" {
    // A host with a 100,000-deep chain or a flat tree, for the tree writers (tools/bench trees).
    TreeHost.run(Array(CommandLine.arguments.dropFirst(2)))
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "registry-bytes" {
    // The host registry's bytes per live node alone. Usage: nodescope-bench registry-bytes [count]
    let count = CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 100_000 : 100_000
    // The fixed cost first: memory freed by an earlier tracker would be reused unseen.
    print("a recording tracker's fixed cost: \(trackerFixedBytes() >> 10) KiB")
    print(String(format: "host registry memory per live node (4 objects each): %.0f bytes", registryBytesPerNode(count: count)))
    exit(0)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "profile-alternating" {
    // Usage: nodescope-bench profile-alternating [pairs] [off|connected]   (both sides by default)
    let side = CommandLine.arguments.count > 3 ? CommandLine.arguments[3] : ""
    profileAlternating(
        pairs: CommandLine.arguments.count > 2 ? Int(CommandLine.arguments[2]) ?? 100 : 100,
        sides: (side != "connected", side != "off"))
    exit(0)
}

if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "profile-cycles" {
    // For profilers (valgrind --tool=callgrind): attach+detach cycles only, the agent connected
    // (or `off`, or `recording`: a recording tracker with no agent, whose registry the app's thread
    // updates itself, on one thread). Usage: nodescope-bench profile-cycles [off|connected|recording] [count]
    let mode = CommandLine.arguments.count < 3 ? "connected" : CommandLine.arguments[2]
    let count = CommandLine.arguments.count > 3 ? Int(CommandLine.arguments[3]) ?? 20_000 : 20_000
    profileCycles(count: count, connected: mode == "connected", recording: mode == "recording")
    exit(0)
}

#if DEBUG
print("warning: a debug build; figures are only meaningful with `swift run -c release nodescope-bench`")
#endif
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB")

if all || arguments.contains("host") {
    printTable("Host agent", runHostBenchmarks(quick: quick))
}
if all || arguments.contains("collector") {
    printTable("Collector", try await runCollectorBenchmarks(quick: quick))
    printTable("Leak flagging", try await runLeakLatencyBenchmark(quick: quick))
}
if all || arguments.contains("recording") {
    printTable("Recording", try await runRecordingBenchmarks(quick: quick))
}
if all || arguments.contains("retainers") {
    printTable("Retainer analysis", runRetainerBenchmarks(quick: quick))
}
#if Export
if all || arguments.contains("export") {
    printTable("Export (OTLP)", runExportBenchmarks(quick: quick) + (try await runExportIngestBenchmark(quick: quick)))
} else if arguments.contains("export-ingest") {
    printTable("Export (OTLP)", try await runExportIngestBenchmark(quick: quick))
}
#endif
if all || arguments.contains("render") {
    printTable("Rendering", try runRenderBenchmarks(quick: quick))
}
