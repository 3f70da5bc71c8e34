// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountViewState.swift
//  GeneratedApp
//

import Nodes

internal struct AccountViewState: Equatable {}

internal class AccountViewStateFactory: Nodes.Transform {

    internal func callAsFunction(
        _ state: AccountState
    ) -> AccountViewState {
        AccountViewState()
    }
}
