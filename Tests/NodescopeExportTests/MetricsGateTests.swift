#if Export
import Synchronization
import Testing

@testable import NodescopeExport

/// On loopback, only requests that name this server in their `Host` are served: a page whose
/// name was rebound to 127.0.0.1 sends its own name.
@Suite struct MetricsGateTests {
    @Test func loopbackNamesOfThePortAreServed() {
        for authority in ["127.0.0.1:9464", "localhost:9464", "LOCALHOST:9464", "[::1]:9464"] {
            #expect(MetricsGate.refusal(authority: authority, port: 9_464) == nil, "\(authority)")
        }
    }

    @Test func otherNamesAndOtherPortsAreRefusedWithTheirReason() throws {
        for authority in ["rebound.example:9464", "127.0.0.1:9465", "127.0.0.1", ""] {
            let reason = try #require(MetricsGate.refusal(authority: authority, port: 9_464), "\(authority)")
            #expect(reason.contains("is not this server's (127.0.0.1:9464)"))
        }
        #expect(MetricsGate.refusal(authority: nil, port: 9_464)?.contains("(none)") == true)
    }
}
#endif

#if Export
/// A scrape waits for the collector at most its deadline, even when the question cannot be
/// cancelled, and stuck questions never pile up past their bound.
@Suite(.serialized) struct ScrapeDeadlineTests {
    /// A gate that stuck questions wait on until the test opens it.
    final class Gate: Sendable {
        private let waiters = Mutex<[CheckedContinuation<Void, Never>]>([])
        private let open = Mutex(false)

        func wait() async {
            await withCheckedContinuation { continuation in
                let opened = open.withLock { $0 }
                if opened {
                    continuation.resume()
                } else {
                    waiters.withLock { $0.append(continuation) }
                }
            }
        }

        func release() {
            open.withLock { $0 = true }
            let waiting = waiters.withLock { list in
                defer { list = [] }
                return list
            }
            for waiter in waiting { waiter.resume() }
        }
    }

    final class Flag: Sendable {
        let value = Mutex(false)
    }

    @Test func anAnswerInTimeIsTheAnswer() async throws {
        let value = try await MetricsServer.within(.seconds(30)) { 42 }
        #expect(value == 42)
    }

    @Test func aQuestionThatNeverEndsIsTimedOutAndStuckOnesAreBounded() async throws {
        let gate = Gate()
        defer { gate.release() }
        await #expect(throws: MetricsServer.TimedOut.self) {
            try await MetricsServer.within(.milliseconds(50)) {
                await gate.wait()
                return 1
            }
        }
        // Seven more stuck questions reach the bound; the next is refused at once, without waiting.
        for _ in 1..<MetricsServer.maxUnfinished {
            _ = try? await MetricsServer.within(.milliseconds(10)) {
                await gate.wait()
                return 1
            }
        }
        let started = Flag()
        await #expect(throws: MetricsServer.TimedOut.self) {
            try await MetricsServer.within(.seconds(600)) {
                started.value.withLock { $0 = true }
                return 1
            }
        }
        #expect(started.value.withLock { $0 } == false, "a question past the bound was started")
        gate.release()
        // Once they end, questions are answered again.
        for _ in 0..<1_000 where MetricsServer.unfinishedCount > 0 { try await Task.sleep(for: .milliseconds(10)) }
        let value = try await MetricsServer.within(.seconds(30)) { 7 }
        #expect(value == 7)
    }
}
#endif
