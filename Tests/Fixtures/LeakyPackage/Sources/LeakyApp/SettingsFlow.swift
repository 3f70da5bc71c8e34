import Nodes

/// The settings screen's node: it cleans up after itself.
public final class SettingsFlow: AbstractFlow<SettingsContext, HeadlessViewController> {
    /// A settings node.
    public init() {
        super.init(context: SettingsContext(workers: [SyncWorker()]), viewController: HeadlessViewController(title: "Settings"))
    }
}

/// The settings' context: a dark-mode switch.
public final class SettingsContext: AbstractContext<CancellationToken> {
    /// The dark-mode switch.
    public let darkMode = ObservableState(false)
}

/// Syncs settings while they are shown.
public final class SyncWorker: AbstractWorker<CancellationToken> {}
