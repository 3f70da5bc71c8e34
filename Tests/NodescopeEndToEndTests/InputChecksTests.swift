import Foundation
import ProcessTestSupport
import Testing

/// Files that commands read are checked before they are read whole (issue 32, point 6): a
/// device, a FIFO or a directory is refused at once with a line that says what it is, and a
/// FIFO with no writer does not block.
@Suite("Inputs checked before they are read", .serialized, .offTheCooperativePool)
struct InputChecksTests {
    /// Runs `nodescope ARGS`; its status and standard error. 20 s is far more than a refusal
    /// takes: reading /dev/zero whole took longer, and a FIFO blocked for ever.
    private func run(_ arguments: [String]) throws -> (status: Int32, stderr: String) {
        let process = try ChildProcess("nodescope", arguments)
        let status = process.waitForExit(seconds: 20)
        return (status, process.stderr)
    }

    @Test func devicesFIFOsAndDirectoriesAreRefusedByEveryReadingCommand() throws {
        let scratch = makeScratchDirectory()
        let fifo = scratch.appendingPathComponent("pipe").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let directory = scratch.appendingPathComponent("folder").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let output = scratch.appendingPathComponent("out").path
        let inputs: [(path: String, noun: String)] = [
            ("/dev/zero", "a character device"), (fifo, "a FIFO (named pipe)"), (directory, "a directory"),
        ]
        for (path, noun) in inputs {
            let commands: [[String]] = [
                ["tree", "--from", path, "--at", "end"],
                ["leaks", "--from", path],
                ["export", "--from", path, "-o", output + ".dot"],
                ["diff", path, path],
                ["timeline", path, "-o", output + ".svg"],
                ["ui", "--from", path, "--port", "0"],
            ]
            for command in commands {
                let (status, stderr) = try run(command)
                #expect(status == 2, "\(command): \(status) \(stderr)")
                #expect(stderr.contains("cannot read \(path): it is \(noun), not a regular file"), "\(command): \(stderr)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: output + ".dot"))
        #expect(!FileManager.default.fileExists(atPath: output + ".svg"))
    }

    /// diff's 1 means "they differ", so an operand it cannot read is a 2: a mistyped file at
    /// once (not waited for as a process), and a process that never connects after its wait.
    @Test func anOperandDiffCannotReadIsAnErrorNotADifference() throws {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let typo = scratch.appendingPathComponent("pinned.jsn.json").path
        let cases: [(arguments: [String], says: String)] = [
            (["diff", typo, typo], "cannot read \(typo): no such file"),
            (["diff", "/no-such-directory/a.json", typo], "cannot read /no-such-directory/a.json: no such file"),
            (["diff", "old.nsrec@2.5", typo], "cannot read old.nsrec: no such file"),
            (["diff", "no-such-process", "no-such-process", "--wait", "0", "--socket", socket], "no process no-such-process"),
        ]
        for (arguments, says) in cases {
            let (status, stderr) = try run(arguments)
            #expect(status == 2, "\(arguments): \(status) \(stderr)")
            #expect(stderr.contains(says), "\(arguments): \(stderr)")
        }
    }

    @Test func aTreeInJSONLargerThanItsBoundIsRefusedUnread() throws {
        // A sparse file: 1 GiB + 1 byte of nothing, refused from its size alone.
        let file = makeScratchDirectory().appendingPathComponent("huge.json").path
        #expect(FileManager.default.createFile(atPath: file, contents: Data("{".utf8)))
        #expect(truncate(file, (1 << 30) + 1) == 0)
        let (status, stderr) = try run(["export", "--from", file, "-o", "-", "--format", "dot"])
        #expect(status == 2)
        #expect(stderr.contains("cannot read \(file): it is 1.0 GiB, more than a tree in JSON may be (1 GiB)"), "\(stderr)")
    }
}
