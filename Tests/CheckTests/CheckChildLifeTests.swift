import Foundation
import ProcessTestSupport
import Testing

/// `check` takes its command, and everything the command started, down with it, however it is
/// ended, and removes its socket directory on every exit it can see; a directory left by a run
/// killed with its guard is removed by the next run.
@Suite("The command's life is tied to check's", .serialized, .offTheCooperativePool)
struct CheckChildLifeTests {
    /// A command that prints its socket, a background sleep's pid and its own pid, then waits.
    static let command = ["/bin/sh", "-c", "echo \"$NODESCOPE_SOCKET\"; sleep 1000 & echo $!; echo $$; wait"]

    /// Whether `pid` is gone (or a zombie, which nothing runs in any more).
    static func isGone(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return true }
        guard let close = stat.lastIndex(of: ")") else { return true }
        return stat[stat.index(after: close)...].split(separator: " ").first == "Z"
    }

    static func wait(seconds: Double, until condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return condition()
    }

    /// Starts `check --quiet -- COMMAND` and waits until the command has said where it runs.
    static func startCheck() throws -> (check: ChildProcess, directory: String, sleep: Int32, shell: Int32) {
        let check = try ChildProcess("nodescope", ["check", "--quiet", "--"] + command)
        #expect(wait(seconds: 20) { check.lines.count >= 3 }, "\(check.stderr)")
        let lines = check.lines
        let socket = try #require(lines.first)
        let sleep = try #require(Int32(lines[1]))
        let shell = try #require(Int32(lines[2]))
        return (check, (socket as NSString).deletingLastPathComponent, sleep, shell)
    }

    @Test func aSIGKILLedCheckTakesItsCommandAndItsSocketDirectoryWithIt() throws {
        let (check, directory, sleep, shell) = try Self.startCheck()
        defer { check.stop() }
        #expect(FileManager.default.fileExists(atPath: directory))
        check.signal(SIGKILL)
        #expect(Self.wait(seconds: 20) { Self.isGone(sleep) && Self.isGone(shell) }, "the command and its children end")
        #expect(Self.wait(seconds: 20) { !FileManager.default.fileExists(atPath: directory) }, "\(directory) is removed")
    }

    @Test(arguments: [SIGTERM, SIGHUP, SIGINT])
    func aSignalToCheckIsForwardedAndEverythingIsCleanedUp(_ signal: Int32) throws {
        let (check, directory, sleep, shell) = try Self.startCheck()
        defer { check.stop() }
        check.signal(signal)
        // The shell dies of the signal; its background sleep (which ignores SIGINT) is ended
        // when check exits.
        #expect(check.waitForExit(seconds: 30) == 128 + signal, "\(check.stderr)")
        #expect(check.stderr.contains("the command was killed by"), "\(check.stderr)")
        #expect(Self.isGone(shell))
        #expect(Self.wait(seconds: 5) { Self.isGone(sleep) }, "nothing the command started outlives check")
        #expect(!FileManager.default.fileExists(atPath: directory), "\(directory) is removed")
    }

    @Test func theNextRunRemovesADirectoryThatNoRunHolds() throws {
        let base = makeScratchDirectory()
        defer { try? FileManager.default.removeItem(at: base) }
        func makeRunDirectory(_ name: String) throws -> String {
            let path = base.appendingPathComponent(name).path
            try FileManager.default.createDirectory(
                atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            FileManager.default.createFile(atPath: path + "/c.sock", contents: nil)
            // As old as a run killed ten minutes ago.
            let old = Date().addingTimeInterval(-600)
            try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: path)
            return path
        }
        let stale = try makeRunDirectory("nodescope-check-stale1")
        let held = try makeRunDirectory("nodescope-check-held01")
        let other = try makeRunDirectory("nodescope-check-other1")
        FileManager.default.createFile(atPath: other + "/notes.txt", contents: Data("mine".utf8))
        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(-600)], ofItemAtPath: other)
        // A live run holds its directory.
        let claim = open(held, O_RDONLY | O_DIRECTORY)
        defer { close(claim) }
        #expect(flock(claim, LOCK_EX | LOCK_NB) == 0)

        let run = try CheckRunner.check(["--quiet", "--", "true"], environment: ["TMPDIR": base.path])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(!FileManager.default.fileExists(atPath: stale), "the unclaimed directory is removed")
        #expect(FileManager.default.fileExists(atPath: held), "a claimed one is kept")
        #expect(FileManager.default.fileExists(atPath: other + "/notes.txt"), "one holding something else is kept")
        let left = try FileManager.default.contentsOfDirectory(atPath: base.path).sorted()
        #expect(left == ["nodescope-check-held01", "nodescope-check-other1"], "the run removed its own directory too")
    }
}
