import Foundation

// nodescope-bench: the benchmarks behind docs/BENCHMARKS.md.
// Usage: nodescope-bench [host] [--quick]     (build with -c release; see docs/BENCHMARKS.md)
let arguments = Set(CommandLine.arguments.dropFirst())
let quick = arguments.contains("--quick")
let all = arguments.subtracting(["--quick"]).isEmpty

#if DEBUG
print("warning: a debug build; figures are only meaningful with `swift run -c release nodescope-bench`")
#endif
print("machine: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(ProcessInfo.processInfo.physicalMemory >> 30) GiB")

if arguments.contains("profile-cycles") {
    // For profilers (valgrind --tool=callgrind): connected attach+detach cycles only.
    profileConnectedCycles(count: 20_000)
    exit(0)
}

if all || arguments.contains("host") {
    printTable("Host agent", runHostBenchmarks(quick: quick))
}
