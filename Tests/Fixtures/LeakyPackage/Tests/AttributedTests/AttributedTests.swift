import Glibc
import LeakyApp
import NodesTesting
import Testing

/// Whether the tests fail on their own leaks (LEAKY_FIXTURE_ASSERT=1), besides marking them.
let failsOnLeaks = getenv("LEAKY_FIXTURE_ASSERT").map { String(cString: $0) == "1" } ?? false

/// Five tests that run in parallel: two leak, each in its own way; one runs beside them and
/// leaks nothing; two are clean. Every node is marked with the test that attached it.
@Suite(.trackingNodes(failingOnLeaks: failsOnLeaks))
@MainActor struct AttributedTests {
    /// Leaks the profile: the activity center keeps its context (unless LEAKY_FIXTURE_CLEAN=1).
    @Test func leaksTheProfile() async throws {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openProfile(of: "ada")
        app.closeProfile()
        window.close()
        try await Task.sleep(for: .milliseconds(100))
    }

    /// Leaks the notes: their context and its save callback hold each other.
    @Test func leaksTheNotesThroughACycle() async throws {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openNotes().context.onSave?()
        app.closeNotes()
        window.close()
        try await Task.sleep(for: .milliseconds(100))
    }

    /// Clean, but runs while its siblings leak, with nodes of its own open meanwhile.
    @Test func runsBesideALeak() async throws {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openSettings()
        try await Task.sleep(for: .milliseconds(300))
        app.closeSettings()
        window.close()
    }

    @Test func openingAndClosingTheSettings() {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openSettings().context.darkMode.value = true
        #expect(app.subFlows.count == 1)
        app.closeSettings()
        window.close()
    }

    @Test func launchingShowsTheHomeScreen() {
        let window = HeadlessWindow()
        window.launch(AppFlow())
        #expect(window.flow?.isStarted == true)
        window.close()
    }
}
