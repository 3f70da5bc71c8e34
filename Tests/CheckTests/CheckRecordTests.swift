import Foundation
import ProcessTestSupport
import Testing

@Suite("check --record: one recording per checked process", .serialized, .offTheCooperativePool)
struct CheckRecordTests {
    @Test func eachProcessLeavesARecordingWhoseLeaksAreTheReportsLeaks() throws {
        let directory = makeReportDirectory()
        let recordings = directory.appendingPathComponent("recordings").path
        let sample = CheckRunner.binary("sample-nodes")
        let result = try CheckRunner.check(
            ["--record", recordings, "--", "/bin/sh", "-c", "\(sample) --quiet --leak retain-cycle; \(sample) --quiet"])
        #expect(result.status == 1, "\(result.stderr)")
        let files = try FileManager.default.contentsOfDirectory(atPath: recordings).filter { $0.hasSuffix(".nsrec") }.sorted()
        #expect(files.count == 2, "\(files)")
        var leakLines: [String] = []
        for file in files {
            let replay = try CheckRunner.run("nodescope", ["leaks", "--from", recordings + "/" + file, "--at", "end"])
            #expect(replay.status == 0)
            #expect(replay.stderr.isEmpty, "\(replay.stderr)")
            leakLines += replay.stdout.split(separator: "\n").filter { $0.hasPrefix("LEAK") }.map(String.init)
        }
        // The leaky run's recording holds its leak; the clean run's holds none.
        #expect(leakLines.count == 1, "\(leakLines)")
        #expect(leakLines.first?.contains("ProfileFlow") == true)
    }
}
