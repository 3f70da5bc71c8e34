import Foundation
import ProcessTestSupport
import Testing

@testable import NodescopeCommands

/// Issue 12, point 7: two outputs of one command never name the same file, and no output
/// replaces an input. First the rule on identities, then `nodescope check` refusing before it
/// runs anything.
@Suite("check: one file per output, never over an input", .serialized, .offTheCooperativePool)
struct OutputConflictTests {
    private func named(_ option: String, _ path: String) -> OutputConflict.Named {
        OutputConflict.Named(option: option, path: path)
    }

    @Test func theRuleComparesIdentitiesNotSpellings() {
        let identities: [String: FileIdentity] = [
            "a.json": FileIdentity(kind: .existing(device: 1, inode: 7)),
            "link-to-a": FileIdentity(kind: .existing(device: 1, inode: 7)),
            "b.xml": FileIdentity(kind: .planned(directory: "/r", name: "b.xml")),
            "./sub/../b.xml": FileIdentity(kind: .planned(directory: "/r", name: "b.xml")),
            "c.sarif": FileIdentity(kind: .planned(directory: "/r", name: "c.sarif")),
        ]
        let identify = { (path: String) in identities[path]! }
        #expect(
            OutputConflict.find(
                outputs: [named("--json", "a.json"), named("--junit", "b.xml")], inputs: [], identify: identify) == nil)
        let twice = OutputConflict.find(
            outputs: [named("--junit", "b.xml"), named("--sarif", "./sub/../b.xml")], inputs: [], identify: identify)
        #expect(twice?.contains("--junit b.xml and --sarif ./sub/../b.xml name the same file") == true, "\(twice ?? "")")
        let over = OutputConflict.find(
            outputs: [named("--sarif", "c.sarif"), named("--json", "link-to-a")], inputs: [named("--baseline", "a.json")],
            identify: identify)
        #expect(over?.contains("--json link-to-a would replace --baseline a.json") == true, "\(over ?? "")")
        #expect(
            OutputConflict.find(
                outputs: [named("--write-baseline", "link-to-a")], inputs: [named("--baseline", "a.json")],
                allowed: [(output: "--write-baseline", input: "--baseline")], identify: identify) == nil)
    }

    @Test func identitiesOfRealFiles() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("b.json").path
        try Data("{}".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.createSymbolicLink(atPath: directory.appendingPathComponent("l").path, withDestinationPath: file)
        try FileManager.default.linkItem(atPath: file, toPath: directory.appendingPathComponent("h").path)
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("sub"), withIntermediateDirectories: true)
        #expect(FileIdentity.of(file) == FileIdentity.of(directory.path + "/l"))
        #expect(FileIdentity.of(file) == FileIdentity.of(directory.path + "/h"))
        #expect(FileIdentity.of(file) == FileIdentity.of(directory.path + "/sub/../b.json"))
        #expect(FileIdentity.of(directory.path + "/new.xml") == FileIdentity.of(directory.path + "/sub/../new.xml"))
        #expect(FileIdentity.of(directory.path + "/new.xml") != FileIdentity.of(directory.path + "/sub/new.xml"))
        try FileManager.default.createSymbolicLink(
            atPath: directory.appendingPathComponent("dangling").path, withDestinationPath: "sub/later.xml")
        #expect(FileIdentity.of(directory.path + "/dangling") == FileIdentity.of(directory.path + "/sub/later.xml"))
    }

    /// Runs check with `options` around a command that leaves a marker file; expects exit 2,
    /// one line naming `expected`, and that the command never ran.
    private func expectRefused(_ options: [String], in directory: URL, expected: String) throws {
        let marker = directory.appendingPathComponent("ran").path
        let result = try CheckRunner.check(options + ["--", "/bin/sh", "-c", "touch '\(marker)'"])
        #expect(result.status == 2, "\(options): \(result.stderr)")
        #expect(result.stderr.contains(expected), "\(options): \(result.stderr)")
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: marker), "the command ran")
    }

    @Test func point7_checkRefusesTwoReportsInOneFileAndAReportOverTheBaseline() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path
        try FileManager.default.createDirectory(atPath: path + "/sub", withIntermediateDirectories: true)

        // Two reports in one new file, spelled alike or not.
        try expectRefused(["--json", path + "/r", "--junit", path + "/r"], in: directory, expected: "name the same file")
        try expectRefused(
            ["--junit", path + "/r.xml", "--sarif", path + "/sub/../r.xml"], in: directory, expected: "name the same file")
        #expect(!FileManager.default.fileExists(atPath: path + "/r"))

        // A report over the baseline, by its name, a link or a hard link.
        let baseline = path + "/known.json"
        let content = #"{"version": 1, "entries": []}"#
        try Data(content.utf8).write(to: URL(fileURLWithPath: baseline))
        try FileManager.default.createSymbolicLink(atPath: path + "/link.json", withDestinationPath: baseline)
        try FileManager.default.linkItem(atPath: baseline, toPath: path + "/hard.json")
        for report in [["--json", baseline], ["--sarif", path + "/link.json"], ["--junit", path + "/hard.json"]] {
            try expectRefused(["--baseline", baseline] + report, in: directory, expected: "would replace --baseline")
        }
        #expect(try String(contentsOfFile: baseline, encoding: .utf8) == content, "the baseline was replaced")
        // A report in the SVG directory's place.
        try expectRefused(["--svg-dir", path + "/svg", "--json", path + "/svg"], in: directory, expected: "name the same file")
    }
}
