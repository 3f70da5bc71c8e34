// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  RootContext.swift
//  GeneratedApp
//

import NodesCombine
import Nodes

/// @mockable
@MainActor
internal protocol RootFlowInterface: Flow {
    func attachAccount()
    func detachAccount()
}

internal final class RootContextImp: AbstractContext
<
    AnyCancellable
> {

    internal weak var flow: RootFlowInterface?

    override internal func didBecomeActive() {}

    override internal func willResignActive() {}
}

extension RootContextImp: RootContextInterface {}

extension RootContextImp: RootReceiver {

    internal func accountButtonTapped() {
        flow?.attachAccount()
    }

    internal func accountCloseButtonTapped() {
        flow?.detachAccount()
    }
}
