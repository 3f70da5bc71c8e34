import Foundation
import Testing

/// Compares generated text with a file under `Snapshots/`, or rewrites the file when
/// `NODESCOPE_UPDATE_SNAPSHOTS=1` is set.
enum SnapshotFile {
    static func check(
        _ actual: String, named name: String,
        filePath: String = #filePath, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let url = URL(fileURLWithPath: filePath).deletingLastPathComponent()
            .appendingPathComponent("Snapshots").appendingPathComponent(name)
        let updating = ProcessInfo.processInfo.environment["NODESCOPE_UPDATE_SNAPSHOTS"] == "1"
        guard !updating, let expected = try? String(contentsOf: url, encoding: .utf8) else {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try actual.write(to: url, atomically: true, encoding: .utf8)
            if !updating {
                Issue.record("recorded a new snapshot at \(url.path); check it and run the tests again", sourceLocation: sourceLocation)
            }
            return
        }
        if actual != expected {
            let actualLines = actual.split(separator: "\n", omittingEmptySubsequences: false)
            let expectedLines = expected.split(separator: "\n", omittingEmptySubsequences: false)
            let line =
                (0..<min(actualLines.count, expectedLines.count)).first { actualLines[$0] != expectedLines[$0] }
                ?? min(actualLines.count, expectedLines.count)
            let got = line < actualLines.count ? String(actualLines[line]) : "<end of text>"
            let wanted = line < expectedLines.count ? String(expectedLines[line]) : "<end of file>"
            Issue.record(
                """
                \(name) differs from the snapshot at line \(line + 1) \
                (NODESCOPE_UPDATE_SNAPSHOTS=1 rewrites it):
                  expected: \(wanted)
                  actual:   \(got)
                """, sourceLocation: sourceLocation)
        }
    }
}
