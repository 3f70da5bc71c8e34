import Foundation

/// What the environment switches in this fixture.
enum FixtureSwitches {
    /// GENERATED_FIXTURE_LEAK=1: the Account context keeps a subscription that holds it outside
    /// its `cancellables`, so the Account node leaks when it is closed.
    static var leaksAccount: Bool {
        ProcessInfo.processInfo.environment["GENERATED_FIXTURE_LEAK"] == "1"
    }
}
