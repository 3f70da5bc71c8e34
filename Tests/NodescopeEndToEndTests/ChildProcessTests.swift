import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The children every end-to-end test starts: spawned without Foundation's `Process` (whose
/// `run()` crashed one CI run), they still start as those tests expect.
@Suite("Test children start clean")
struct ChildProcessTests {
    @Test func aChildHoldsOnlyItsThreeStandardDescriptors() throws {
        // A descriptor this process leaves open across exec must not reach the child.
        let leaky = open("/dev/null", O_RDONLY)
        #expect(leaky >= 3)
        defer { close(leaky) }
        let child = try ChildProcess("/bin/sh", ["-c", "ls -1 /proc/$$/fd; readlink /proc/$$/fd/0"], absolutePath: true)
        #expect(child.waitForExit() == 0, "\(child.stderr)")
        #expect(child.lines == ["0", "1", "2", "/dev/null"])
    }

    @Test func aChildHasItsOwnGroupAndNoSignalBlockedOrIgnored() throws {
        let child = try ChildProcess(
            "/bin/sh", ["-c", "ps -o pgid= -p $$; grep -E '^Sig(Blk|Ign):' /proc/$$/status"], absolutePath: true)
        #expect(child.waitForExit() == 0, "\(child.stderr)")
        let lines = child.lines.map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(lines.first == "\(child.process.processIdentifier)")
        // Signals 1 to 31 (32 and 33 are glibc's own, which posix_spawn leaves as they are).
        let masks = lines.dropFirst().compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(masks.count == 2 && masks.allSatisfy { $0 & 0x7FFF_FFFF == 0 }, "\(lines)")
    }

    @Test func exitStatusesAndSignalsAreTold() throws {
        let exits = try ChildProcess("/bin/sh", ["-c", "echo out; echo err >&2; exit 7"], absolutePath: true)
        #expect(exits.waitForExit() == 7)
        #expect(exits.process.terminationReason == .exit)
        #expect(exits.stdout == "out\n")
        #expect(exits.stderr == "err\n")

        let killed = try ChildProcess("/bin/sleep", ["30"], absolutePath: true)
        #expect(killed.process.isRunning)
        killed.signal(SIGTERM)
        #expect(killed.waitForExit() == SIGTERM)
        #expect(killed.process.terminationReason == .uncaughtSignal)
        #expect(!killed.process.isRunning)
    }

    @Test func aProgramThatIsNotThereIsAnError() {
        #expect(throws: SpawnedProcess.SpawnFailure.self) {
            try ChildProcess("/nonexistent/program", [], absolutePath: true)
        }
    }
}
