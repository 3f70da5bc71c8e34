// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountPluginInterface.swift
//  GeneratedApp
//

/*
 This file contains the protocols and types of the plugin interface requiring public ACL for use in another module.
 */

internal typealias AccountPluginStateType = Void

/// @mockable
@MainActor
internal protocol AccountPlugin {
    func create() -> AccountBuilder?
}
