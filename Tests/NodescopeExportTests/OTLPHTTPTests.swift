#if Export
import Glibc
import NIOCore
import Testing

@testable import NodescopeExport

/// The bound on an export's waits: what is not done by its deadline is not waited for.
@Suite struct OTLPHTTPTests {
    /// (The bounds are wide: on a loaded machine with two processors, the tests beside this one
    /// can hold the few threads that run tasks for a minute and more, and a task waits for one.)
    @Test func workDoneInTimeIsTakenAndWorkThatIsNotIsLeftBehind() async {
        #expect(await OTLPHTTP.first(by: .now() + .seconds(600)) { 42 } == 42)
        let started = NIODeadline.now()
        // Work that never ends (a shutdown stuck on a dead peer): the wait ends at the deadline.
        let never: Int? = await OTLPHTTP.first(by: .now() + .milliseconds(50)) {
            try? await Task.sleep(for: .seconds(3_600))
            return 1
        }
        #expect(never == nil)
        // Ended at the deadline, not after the work's hour.
        #expect(NIODeadline.now() - started < .seconds(1_800))
    }

    /// A post cut short because its tool is stopping says so in words, not `CancellationError()`.
    @Test func aPostCancelledByItsStoppingToolSaysSo() async throws {
        // A listener that never answers: the kernel takes the connection, nobody reads it.
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, length) == 0 && getsockname(listener, $0, &length) == 0
            }
        }
        try #require(bound && listen(listener, 4) == 0)
        let port = UInt16(bigEndian: address.sin_port)
        // Bounds of an hour: only the cancel ends the post (a loaded run saw the test's task wait
        // longer than a minute for a thread, and a bound of 60 s end the post first).
        let target = OTLPConfiguration.Target(url: "http://127.0.0.1:\(port)/v1/traces", headers: [], timeoutMilliseconds: 3_600_000)
        let client = OTLPHTTP.makeClient(connectMilliseconds: 3_600_000)
        let post = Task {
            await OTLPHTTP.post([1, 2, 3], to: target, client: client, deadline: .now() + .seconds(3_600)) { _ in nil }
        }
        try await Task.sleep(for: .milliseconds(300))
        post.cancel()
        guard case .failure(let failure) = await post.value else {
            Issue.record("a post to an endpoint that never answers succeeded")
            return
        }
        #expect(failure.message == "stopped before the endpoint answered")
        await OTLPHTTP.shutDown(client, before: .now() + .seconds(5))
    }
}
#endif
