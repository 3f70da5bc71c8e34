import Foundation
import ProcessTestSupport
import Testing

/// `check`'s files at the edges (issue 32): a baseline that is no regular file or too large is
/// refused before the command runs, stale entries are summarized, and every report or recording
/// that cannot be written is an error (exit 2) that names the file, leaving nothing half-written.
@Suite("check: inputs refused, failed writes reported", .serialized, .offTheCooperativePool)
struct CheckFilesAtTheEdgesTests {
    /// A full file system of 64 KiB (tmpfs), or nil when mounting is not permitted here.
    private static func fullFileSystem() -> URL? {
        let directory = makeReportDirectory().appendingPathComponent("full")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        guard getuid() == 0, mount("tmpfs", directory.path, "tmpfs", 0, "size=64k") == 0 else { return nil }
        // Fill it: a file as large as the file system takes.
        let filler = open(directory.appendingPathComponent("filler").path, O_WRONLY | O_CREAT, 0o600)
        let block = [UInt8](repeating: 0x41, count: 4_096)
        while block.withUnsafeBytes({ write(filler, $0.baseAddress, $0.count) }) > 0 {}
        close(filler)
        return directory
    }

    private static func unmount(_ directory: URL) {
        umount2(directory.path, Int32(MNT_DETACH))
    }

    @Test func aReportToDevFullFailsNamingTheFile() throws {
        for option in ["--json", "--junit", "--sarif"] {
            let result = try CheckRunner.check([option, "/dev/full", "--", "true"])
            #expect(result.status == 2, "\(option): \(result.stderr)")
            #expect(result.stderr.contains("cannot write /dev/full: No space left on device"), "\(option): \(result.stderr)")
        }
        // Written in place, never replaced by a regular file.
        var info = stat()
        #expect(stat("/dev/full", &info) == 0 && info.st_mode & S_IFMT == S_IFCHR)
    }

    @Test func aFullDiskLeavesNoHalfWrittenReportOrRecording() throws {
        guard let full = Self.fullFileSystem() else {
            print("skipped: mounting a 64 KiB tmpfs is not permitted here (needs root and CAP_SYS_ADMIN)")
            return
        }
        defer { Self.unmount(full) }
        let report = full.appendingPathComponent("report.json").path
        let recordings = full.appendingPathComponent("recordings").path
        try FileManager.default.createDirectory(atPath: recordings, withIntermediateDirectories: true)
        let sample = CheckRunner.binary("sample-nodes")
        let result = try CheckRunner.check(["--json", report, "--record", recordings, "--", sample, "--quiet"])
        #expect(result.status == 2, "\(result.stderr)")
        #expect(result.stderr.contains("cannot write \(report): No space left on device"), "\(result.stderr)")
        #expect(result.stderr.contains("--record: cannot write \(recordings)/"), "\(result.stderr)")
        #expect(result.stderr.contains("No space left on device"), "\(result.stderr)")
        // Nothing half-written where the files were asked for, and no temporary file left over.
        let left = try FileManager.default.contentsOfDirectory(atPath: full.path).sorted()
        #expect(left == ["filler", "recordings"], "\(left)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: recordings) == [])
    }

    @Test func aBaselineThatIsNoRegularFileIsRefusedBeforeTheCommandRuns() throws {
        let directory = makeReportDirectory()
        let fifo = directory.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let marker = directory.appendingPathComponent("ran").path
        for (path, noun) in [("/dev/zero", "a character device"), (fifo, "a FIFO (named pipe)")] {
            let result = try CheckRunner.check(["--baseline", path, "--", "touch", marker], seconds: 20)
            #expect(result.status == 2, "\(path): \(result.stderr)")
            #expect(result.stderr.contains("cannot read \(path): it is \(noun), not a regular file"), "\(result.stderr)")
        }
        let folder = try CheckRunner.check(["--baseline", directory.path, "--", "touch", marker], seconds: 20)
        #expect(folder.status == 2)
        #expect(folder.stderr.contains("not a readable file"), "\(folder.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aBaselineOverItsBoundsIsRefused() throws {
        let directory = makeReportDirectory()
        // Over 16 MiB: refused from its size, unread.
        let large = directory.appendingPathComponent("large.json").path
        #expect(FileManager.default.createFile(atPath: large, contents: Data("{".utf8)))
        #expect(truncate(large, (16 << 20) + 1) == 0)
        let sized = try CheckRunner.check(["--baseline", large, "--", "true"], seconds: 20)
        #expect(sized.status == 2)
        #expect(sized.stderr.contains("cannot read \(large): it is 16.0 MiB, more than a baseline may be (16 MiB)"), "\(sized.stderr)")

        // Under 16 MiB but more entries than a baseline may have.
        let many = directory.appendingPathComponent("many.json").path
        let entries = (0..<100_001).map { #"{"path":"**/F\#($0)","reason":"r"}"# }.joined(separator: ",\n")
        try Data(("{\"version\": 1, \"entries\": [\n" + entries + "\n]}\n").utf8).write(to: URL(fileURLWithPath: many))
        let counted = try CheckRunner.check(["--baseline", many, "--", "true"], seconds: 60)
        #expect(counted.status == 2)
        #expect(counted.stderr.contains("has 100001 entries, more than a baseline may have (100000)"), "\(counted.stderr)")
    }

    @Test func staleBaselineEntriesBeyondTenAreCountedOnOneLine() throws {
        let directory = makeReportDirectory()
        let baseline = directory.appendingPathComponent("baseline.json").path
        let entries = (0..<25).map { #"{"path":"**/GoneFlow\#($0)","reason":"TODO: explain"}"# }.joined(separator: ",\n")
        try Data(("{\"version\": 1, \"entries\": [\n" + entries + "\n]}\n").utf8).write(to: URL(fileURLWithPath: baseline))
        let result = try CheckRunner.check(["--baseline", baseline, "--", "true"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "STALE BASELINE ENTRY ").count - 1 == 10, "\(result.stderr)")
        #expect(result.stderr.contains("and 15 more that matched no leak in this run"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "has no reason yet").count - 1 == 10, "\(result.stderr)")
        #expect(result.stderr.contains("and 15 more entries have no reason yet"), "\(result.stderr)")
    }
}
