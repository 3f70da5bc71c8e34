// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  RootFlow.swift
//  GeneratedApp
//

import Nodes

/// @mockable
@MainActor
internal protocol RootContextInterface: Context, AccountListener {}

/// @mockable
@MainActor
internal protocol RootViewControllable: ViewControllable {
    func present(_ viewController: ViewControllable)
    func dismiss(_ viewController: ViewControllable)
}

internal final class RootFlowImp: AbstractFlow
<
    RootContextInterface,
    RootViewControllable
> {

    private let accountPlugin: AccountPlugin

    internal init(
        context: RootContextInterface,
        viewController: RootViewControllable,
        accountPlugin: AccountPlugin
    ) {
        self.accountPlugin = accountPlugin
        super.init(context: context, viewController: viewController)
    }

    internal func getViewController() -> ViewControllable {
        viewController
    }
}

extension RootFlowImp: RootFlow {}

extension RootFlowImp: RootFlowInterface {

    internal func attachAccount() {
        guard subFlows(ofType: AccountFlow.self).isEmpty, let builder = accountPlugin.create()
        else { return }
        let flow: AccountFlow = builder.build(withListener: context)
        viewController.present(flow.getViewController())
        attach(starting: flow)
    }

    internal func detachAccount() {
        withFirstSubFlow(ofType: AccountFlow.self) { flow in
            detach(ending: flow)
            viewController.dismiss(flow.getViewController())
        }
    }
}
