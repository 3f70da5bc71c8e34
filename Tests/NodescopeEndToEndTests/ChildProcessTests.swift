import Foundation
import Glibc
import ProcessTestSupport
import Testing

/// The children every end-to-end test starts: spawned without Foundation's `Process` (whose
/// `run()` crashed one CI run), they still start as those tests expect.
@Suite("Test children start clean", .offTheCooperativePool)
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
        let group = try ChildProcess("/bin/sh", ["-c", "ps -o pgid= -p $$"], absolutePath: true)
        #expect(group.waitForExit() == 0, "\(group.stderr)")
        #expect(group.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "\(group.process.processIdentifier)")
        // The child's own masks, read by the child itself (a shell blocks signals around its
        // forks, so its status read from a command it starts would say so).
        let signals = try ChildProcess("/usr/bin/grep", ["-E", "^Sig(Blk|Ign):", "/proc/self/status"], absolutePath: true)
        #expect(signals.waitForExit() == 0, "\(signals.stderr)")
        // Signals 1 to 31 (32 and 33 are glibc's own, which posix_spawn leaves as they are).
        let masks = signals.lines.compactMap { UInt64($0.split(separator: "\t").last ?? "", radix: 16) }
        #expect(masks.count == 2 && masks.allSatisfy { $0 & 0x7FFF_FFFF == 0 }, "\(signals.lines)")
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
