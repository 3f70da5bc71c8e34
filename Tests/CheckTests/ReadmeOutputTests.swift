import Foundation
import ProcessTestSupport
import Testing

/// The README's output blocks are the tool's output: `tools/check-readme-output` runs each
/// block's recipe (the demo, `why` on a sample, `check` on a sample) with the built binaries and
/// compares, ignoring times, pids and ids.
@Suite("The README's output blocks", .serialized, .offTheCooperativePool)
struct ReadmeOutputTests {
    // A bound against a hang, not a timing: alone the recipes take about 10 s (9.9 s beside two
    // CPU hogs), but in a full `swift test` this test waited 150-270 s, most of it before its
    // command started, while other tests held the test process's threads (a fresh checkout's
    // first run went past 3 minutes).
    @Test(.timeLimit(.minutes(8)))
    func everyMarkedBlockIsWhatTheToolPrints() throws {
        let result = try CheckRunner.run(
            repositoryRoot.appendingPathComponent("tools/check-readme-output").path,
            ["--bin", ChildProcess.binDirectory.path], seconds: 150)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stdout.contains("output blocks of README.md are what the tool prints"), "\(result.stdout)")
    }
}
