import LeakyApp
import Nodes
import Testing

/// Several ordinary tests; one of them (`closingTheProfile`) leaks the profile's node unless
/// LEAKY_FIXTURE_CLEAN=1. Each test builds its own tree and closes it.
@MainActor @Suite struct LeakyAppTests {
    @Test func launchingShowsTheHomeScreen() {
        let window = HeadlessWindow()
        window.launch(AppFlow())
        #expect(window.flow?.isStarted == true)
        window.close()
        #expect(window.flow == nil)
    }

    @Test func openingAndClosingTheSettings() {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openSettings().context.darkMode.value = true
        #expect(app.subFlows.count == 1)
        app.closeSettings()
        #expect(app.subFlows.isEmpty)
        window.close()
    }

    @Test func closingTheProfile() {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openProfile(of: "ada")
        #expect(app.firstSubFlow(ofType: ProfileFlow.self)?.context.user == "ada")
        app.closeProfile()
        #expect(app.subFlows.isEmpty)
        window.close()
    }

    @Test(arguments: ["grace", "alan", "barbara"])
    func openingSettingsForEachUser(_ user: String) {
        let window = HeadlessWindow()
        let app = AppFlow()
        window.launch(app)
        app.openSettings()
        app.closeSettings()
        window.close()
        #expect(!user.isEmpty)
    }
}
