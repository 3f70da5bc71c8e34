import Foundation
import NodescopeWire
import ProcessTestSupport
import Testing

/// The retainer analysis in real apps: the samples with their injected leaks, each agent talking
/// to a listener that holds the exit (so the frames go out before the goodbye). The hops must
/// name the holder each leak is made of.
@Suite("Retainers of the samples' leaks", .serialized, .offTheCooperativePool)
struct SampleRetainersTests {
    /// Runs `sample` with `--leak kind` and returns its retainers frames as lines:
    /// `verdict: holder reference -> holder reference …`, the suspect starred.
    func retainerLines(_ sample: String = "sample-nodes", leak kind: String) throws -> [String] {
        let scratch = makeScratchDirectory()
        let socket = scratch.appendingPathComponent("c.sock").path
        let listener = try ChildProcess("test-listener", [socket, scratch.path, "--hold-exit", "--grace-ms", "300"])
        #expect(listener.waitForLine(prefix: "listening") != nil)
        // A debug build on a busy machine: the analysis gets far more than its default 50 ms.
        let host = try ChildProcess(
            sample, ["--leak", kind, "--quiet"], environment: ["NODESCOPE_SOCKET": socket, "NODESCOPE_RETAINER_MS": "20000"])
        #expect(host.waitForExit(seconds: 60) == 0)
        #expect(listener.waitForLine(prefix: "closed 1") != nil)
        listener.stop()
        var decoder = FrameDecoder()
        decoder.feed(try Data(contentsOf: scratch.appendingPathComponent("connection-1.bin")))
        var lines: [String] = []
        while let message = try decoder.next() {
            guard case .retainers(let frame) = message else { continue }
            let hops = frame.hops.map { "\($0.holder) \($0.reference)\($0.isSuspect ? " *" : "")" }
            lines.append("\(frame.verdict): " + hops.joined(separator: " -> ") + (frame.note.isEmpty ? "" : " (\(frame.note))"))
        }
        return lines
    }

    /// Every frame has the verdict and contains the hops expected (the suspect starred).
    func expect(_ lines: [String], verdict: String, containing parts: [String], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(!lines.isEmpty, sourceLocation: sourceLocation)
        for line in lines {
            #expect(line.hasPrefix(verdict + ": "), "\(line)", sourceLocation: sourceLocation)
            for part in parts { #expect(line.contains(part), "\(line)", sourceLocation: sourceLocation) }
        }
    }

    @Test func aClosureKeptInTheSessionsListenersIsNamed() throws {
        // The profile context, captured by the closure the session keeps (one per log-in).
        expect(
            try retainerLines(leak: "retain-cycle"), verdict: "holder",
            containing: ["AppComponent .sharedInstances[\"session\"] -> Session .listeners[", "] * -> closure context capture"])
    }

    @Test func aTimerNeverInvalidatedIsNamedWithItsBlock() throws {
        // The settings' context, worker and view, through the ticker's timer and its block.
        expect(
            try retainerLines(leak: "worker"), verdict: "holder",
            containing: ["AppComponent .sharedInstances[\"ticker\"] -> Ticker .timers[", "] * -> Timer .block -> closure context capture"])
    }

    @Test func anObservationNeverCancelledIsNamedByTheStateThatKeepsIt() throws {
        // What keeps the detail's context is the feed state's observer closure (the cancellable
        // stored in Session.cancellables would remove it, but holds the state weakly).
        expect(
            try retainerLines(leak: "subscription"), verdict: "holder",
            containing: [
                "AppComponent .sharedInstances[\"feedState\"] -> ObservableState<FeedState> .observers[0] * -> closure context capture"
            ])
    }

    @Test func aViewKeptByAnalyticsIsNamed() throws {
        expect(
            try retainerLines(leak: "view"), verdict: "holder",
            containing: ["AppComponent .sharedInstances[\"analytics\"] -> Analytics .pendingScreens[0] *"])
    }

    @Test func theRetainCyclesOfTheOtherArchitecturesAreNamed() throws {
        let ribs = try retainerLines("sample-ribs", leak: "retain-cycle")
        expect(
            ribs.filter { $0.hasPrefix("cycle") }, verdict: "cycle",
            containing: ["RequestInteractor .profileStream -> ReplayStream<RiderProfile> .observers[", "] * -> closure context capture"])
        // The interactor's presenter is on no cycle: the interactor's cycle keeps it.
        expect(
            ribs.filter { !$0.hasPrefix("cycle") }, verdict: "holder",
            containing: ["-> RequestInteractor .presenter (held by a retain cycle through RequestInteractor)"])
        let viper = try retainerLines("sample-viper", leak: "retain-cycle")
        expect(
            viper.filter { $0.hasPrefix("cycle") }, verdict: "cycle",
            containing: ["ProfileEditPresenter .strongView *", "ProfileEditViewController .presenter"])
        expect(
            viper.filter { !$0.hasPrefix("cycle") }, verdict: "holder",
            containing: ["(held by a retain cycle through ProfileEditPresenter)"])
        expect(
            try retainerLines("sample-bfg", leak: "retain-cycle"), verdict: "cycle",
            containing: ["WordDetailsViewModel .onChange *", "WordDetailsViewController .viewModel"])
        expect(
            try retainerLines("sample-modules", leak: "retain-cycle"), verdict: "cycle",
            containing: [".events -> EventStream .handlers[0] * -> closure context capture"])
    }
}
