// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  SettingsPluginListInterface.swift
//  GeneratedApp
//

import Nodes

/*
 This file contains the protocols and types of the plugin list interface requiring public ACL for use in another module.
 */

/// @mockable
@MainActor
internal protocol SettingsListener: AnyObject {}

/// @mockable
@MainActor
internal protocol SettingsFlow: ViewControllableFlow {}

/// @mockable
@MainActor
internal protocol SettingsBuilder: AnyObject {
    func build(
        withListener listener: SettingsListener
    ) -> SettingsFlow
}

internal typealias SettingsPluginListKeyType = String

internal typealias SettingsPluginListStateType = Void

/// @mockable
@MainActor
internal protocol SettingsPluginList {
    func createAll() -> [SettingsBuilder]
    func create() -> SettingsBuilder?
    func create(key: SettingsPluginListKeyType) -> SettingsBuilder?
}
