/// A feature that is a single screen needs no graph: its builder makes the view, as the BFG
/// architecture says of a one-output feature.
protocol ViewControllerBuilder {
    func build() -> ViewController
}

final class SettingsScreenBuilder: ViewControllerBuilder {
    func build() -> ViewController { SettingsViewController(title: "Settings") }
}

final class SettingsViewController: ViewController {}
