// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountInterface.swift
//  GeneratedApp
//

import Nodes

/*
 This file contains the protocols and types of the interface requiring public ACL for use in another module.
 */

/// @mockable
@MainActor
internal protocol AccountListener: AnyObject {}

/// @mockable
@MainActor
internal protocol AccountFlow: ViewControllableFlow {}

/// @mockable
@MainActor
internal protocol AccountBuilder: AnyObject {
    func build(
        withListener listener: AccountListener
    ) -> AccountFlow
}
