import Nodes

@MainActor
protocol SettingsSyncListener: AnyObject, Sendable {
    func didSync(count: Int)
}

/// Syncs the settings to the server once a second while the settings tab is active.
final class SettingsSyncWorker: AbstractWorker<CancellationToken> {
    /// The settings' context, told after each sync.
    weak var listener: SettingsSyncListener?
    private let ticker: Ticker
    private let injectedLeak: InjectedLeak?
    private var timer: Ticker.Timer?
    private var syncs = 0

    init(ticker: Ticker, injectedLeak: InjectedLeak?) {
        self.ticker = ticker
        self.injectedLeak = injectedLeak
        super.init()
    }

    override func didStart() {
        // The timer's closure holds the worker and its listener while the timer runs.
        let listener = self.listener
        timer = ticker.scheduledTimer { [self] in
            syncs += 1
            let count = syncs
            // The ticker fires on the main thread, where the settings' context lives.
            MainActor.assumeIsolated { listener?.didSync(count: count) }
        }
    }

    override func willStop() {
        // LEAK (--leak worker): the timer is never invalidated, so the ticker keeps running the
        // closure, which keeps this worker and the settings' context alive after the detach.
        guard injectedLeak != .worker else { return }
        timer?.invalidate()
        timer = nil
    }
}

/// The settings' view: shows the preferences it is given.
final class SettingsViewController: HeadlessViewController, WithViewState {
    private(set) var viewState: String?
    func update(with state: String) { viewState = state }
}

final class SettingsContextImp: AbstractPresentableContext<CancellationToken, SettingsViewController>, SettingsSyncListener {
    private let preferences: ObservableState<Preferences>
    private(set) var lastSyncCount = 0

    init(presentable: SettingsViewController, preferences: ObservableState<Preferences>, workers: [Worker]) {
        self.preferences = preferences
        super.init(presentable: presentable, workers: workers)
    }

    override func didBecomeActive() {
        let summary = ClosureTransform<Preferences, String> { "dark mode \($0.darkMode ? "on" : "off")" }
        preferences.observe(transform: summary, observer: presentable).store(in: &cancellables)
    }

    func didSync(count: Int) { lastSyncCount = count }
}

final class SettingsFlowImp: AbstractFlow<SettingsContextImp, SettingsViewController> {}

@MainActor
final class SettingsBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build() -> SettingsFlowImp {
        let view = SettingsViewController(title: "Settings")
        let worker = SettingsSyncWorker(ticker: component.ticker, injectedLeak: component.injectedLeak)
        let context = SettingsContextImp(presentable: view, preferences: component.preferences, workers: [worker])
        worker.listener = context
        return SettingsFlowImp(context: context, viewController: view)
    }
}
