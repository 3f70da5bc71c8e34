// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  RootInterface.swift
//  GeneratedApp
//

import Nodes

/*
 This file contains the protocols and types of the interface requiring public ACL for use in another module.
 */

/// @mockable
@MainActor
internal protocol RootFlow: ViewControllableFlow {}

/// @mockable
@MainActor
internal protocol RootBuilder: AnyObject {
    func build() -> RootFlow
}
