// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountContext.swift
//  GeneratedApp
//

import NodesCombine
import Nodes

/// @mockable
@MainActor
internal protocol AccountFlowInterface: Flow {}

internal final class AccountContextImp: AbstractContext
<
    AnyCancellable
> {

    internal weak var flow: AccountFlowInterface?

    internal weak var listener: AccountListener?

    private let store: AnyStateStore<AccountState>

    private let analytics: AccountAnalytics

    // Not generated: the subscription that GENERATED_FIXTURE_LEAK=1 keeps outside `cancellables`.
    private let sessionEvents: PassthroughSubject<Int, Never> = .init()
    private var sessionSubscription: AnyCancellable?

    internal init<T: StateStore>(
        workers: [Worker],
        store: T,
        analytics: AccountAnalytics
    ) where T.State == AccountState {
        self.store = AnyStateStore(store)
        self.analytics = analytics
        super.init(workers: workers)
    }

    override internal func didBecomeActive() {
        // The typical Combine leak when the switch is on: a sink that captures `self` strongly,
        // kept in a property of `self` instead of in `cancellables` (which deactivation cancels).
        let subscription = sessionEvents.sink { count in
            self.store.state.sessionCount = count
        }
        if FixtureSwitches.leaksAccount {
            sessionSubscription = subscription
        } else {
            subscription.store(in: &cancellables)
        }
        sessionEvents.send(1)
    }

    override internal func willResignActive() {}
}

extension AccountContextImp: AccountContextInterface {}
extension AccountContextImp: AccountReceiver {}
