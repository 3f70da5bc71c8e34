import Glibc
import LeakyApp
import NodesTesting
import XCTest

/// The same five tests as AttributedTests, in XCTest: two leak, each in its own way; one leaks
/// nothing while a task it does not own leaks beside it; two are clean.
final class AttributedXCTests: NodesTestCase {
    /// Whether the tests fail on their own leaks (LEAKY_FIXTURE_ASSERT=1), besides marking them.
    override var failsOnNodeLeaks: Bool { getenv("LEAKY_FIXTURE_ASSERT").map { String(cString: $0) == "1" } ?? false }

    func testLeaksTheProfile() {
        MainActor.assumeIsolated {
            let window = HeadlessWindow()
            let app = AppFlow()
            window.launch(app)
            app.openProfile(of: "ada")
            app.closeProfile()
            window.close()
        }
    }

    func testLeaksTheNotesThroughACycle() {
        MainActor.assumeIsolated {
            let window = HeadlessWindow()
            let app = AppFlow()
            window.launch(app)
            app.openNotes().context.onSave?()
            app.closeNotes()
            window.close()
        }
    }

    @MainActor
    func testRunsBesideALeak() async throws {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openSettings()
        try await Task.sleep(for: .milliseconds(300))
        app.closeSettings()
        window.close()
    }

    func testOpeningAndClosingTheSettings() {
        MainActor.assumeIsolated {
            let window = HeadlessWindow()
            let app = AppFlow()
            window.launch(app)
            app.openSettings().context.darkMode.value = true
            XCTAssertEqual(app.subFlows.count, 1)
            app.closeSettings()
            window.close()
        }
    }

    func testLaunchingShowsTheHomeScreen() {
        MainActor.assumeIsolated {
            let window = HeadlessWindow()
            window.launch(AppFlow())
            XCTAssertEqual(window.flow?.isStarted, true)
            window.close()
        }
    }
}
