import Foundation
import NodesDebug

/// The benchmarks' waits, each with a bound: past it, a benchmark says what it waited for and
/// fails (exit status 1) rather than hang, so that `tools/bench` always ends.
enum Bounded {
    /// Polls `condition` every millisecond for at most `seconds`; past that, fails naming `what`.
    static func wait(for what: String, seconds: Double = 30, _ condition: () -> Bool) {
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(seconds * 1e9)
        while !condition() {
            if DispatchTime.now().uptimeNanoseconds >= deadline { fail("\(what): not within \(seconds) s") }
            usleep(1_000)
        }
    }

    /// Waits until `agent` has sent every event recorded so far; fails when it has not within
    /// `seconds` (a figure measured on a backlog would be wrong).
    static func flush(_ agent: NodescopeAgent, _ what: String, seconds: Double = 10) {
        guard agent.waitUntilFlushed(timeoutNanoseconds: UInt64(seconds * 1e9)) else {
            fail("the agent did not send the events of \(what) within \(seconds) s")
        }
    }

    /// Says why the benchmark cannot go on, and ends it.
    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("nodescope-bench: \(message)\n".utf8))
        exit(1)
    }
}
