import Nodes

final class ProfileContextImp: AbstractContext<AnyCancellable> {}
final class ProfileFlowImp: AbstractFlow<ProfileContextImp, HeadlessViewController> {}

final class ProfileBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(user: String) -> ProfileFlowImp {
        ProfileFlowImp(context: ProfileContextImp(workers: []), viewController: HeadlessViewController(title: user))
    }
}

/// Syncs settings while the settings tab is active.
final class SettingsSyncWorker: AbstractWorker<AnyCancellable> {}

final class SettingsContextImp: AbstractContext<AnyCancellable> {}
final class SettingsFlowImp: AbstractFlow<SettingsContextImp, HeadlessViewController> {}

final class SettingsBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build() -> SettingsFlowImp {
        SettingsFlowImp(
            context: SettingsContextImp(workers: [SettingsSyncWorker()]),
            viewController: HeadlessViewController(title: "Settings"))
    }
}
