// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountSessionWorker.swift
//  GeneratedApp
//

import NodesCombine
import Nodes

/// @mockable
internal protocol AccountSessionWorker: Worker {}

internal final class AccountSessionWorkerImp: AbstractWorker
<
    AnyCancellable
> {

    override internal func didStart() {}

    override internal func willStop() {}
}

extension AccountSessionWorkerImp: AccountSessionWorker {}
