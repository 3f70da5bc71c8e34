// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountFlow.swift
//  GeneratedApp
//

import Nodes

/// @mockable
@MainActor
internal protocol AccountContextInterface: Context {}

/// @mockable
@MainActor
internal protocol AccountViewControllable: ViewControllable {}

internal final class AccountFlowImp: AbstractFlow
<
    AccountContextInterface,
    AccountViewControllable
> {

    override internal init(
        context: AccountContextInterface,
        viewController: AccountViewControllable
    ) {
        super.init(context: context, viewController: viewController)
    }

    override internal func didStart() {}

    internal func getViewController() -> ViewControllable {
        viewController
    }
}

extension AccountFlowImp: AccountFlow {}
extension AccountFlowImp: AccountFlowInterface {}
