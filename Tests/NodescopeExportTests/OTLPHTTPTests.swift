#if Export
import NIOCore
import Testing

@testable import NodescopeExport

/// The bound on an export's waits: what is not done by its deadline is not waited for.
@Suite struct OTLPHTTPTests {
    @Test func workDoneInTimeIsTakenAndWorkThatIsNotIsLeftBehind() async {
        #expect(await OTLPHTTP.first(by: .now() + .seconds(5)) { 42 } == 42)
        let started = NIODeadline.now()
        // Work that never ends (a shutdown stuck on a dead peer): the wait ends at the deadline.
        let never: Int? = await OTLPHTTP.first(by: .now() + .milliseconds(50)) {
            try? await Task.sleep(for: .seconds(3_600))
            return 1
        }
        #expect(never == nil)
        #expect(NIODeadline.now() - started < .seconds(30))
    }
}
#endif
