import Nodes

/// The profile tab: shows the user's name, which it keeps up to date through the session.
final class ProfileContextImp: AbstractContext<CancellationToken> {
    private let session: Session
    private let injectedLeak: InjectedLeak?
    private(set) var displayName: String

    init(session: Session, user: String, injectedLeak: InjectedLeak?) {
        self.session = session
        self.displayName = user
        self.injectedLeak = injectedLeak
        super.init(workers: [])
    }

    override func didBecomeActive() {
        if injectedLeak == .retainCycle {
            // LEAK (--leak retain-cycle): the session keeps this closure for its whole life and
            // the closure keeps `self`, so the context outlives its node.
            session.onChange { user in self.displayName = user ?? "" }
        } else {
            session.onChange { [weak self] user in self?.displayName = user ?? "" }
        }
    }
}

final class ProfileFlowImp: AbstractFlow<ProfileContextImp, HeadlessViewController> {}

@MainActor
final class ProfileBuilder {
    let component: AppComponent
    init(component: AppComponent) { self.component = component }

    func build(user: String) -> ProfileFlowImp {
        let context = ProfileContextImp(session: component.session, user: user, injectedLeak: component.injectedLeak)
        return ProfileFlowImp(context: context, viewController: HeadlessViewController(title: user))
    }
}
