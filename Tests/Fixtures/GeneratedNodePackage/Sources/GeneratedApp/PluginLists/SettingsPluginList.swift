// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  SettingsPluginList.swift
//  GeneratedApp
//

import Nodes

// MARK: - Dependency

/// @mockable
@MainActor
public protocol SettingsPluginListDependency: Dependency {}

// MARK: - Component

public final class SettingsPluginListComponent: Component
<
    SettingsPluginListDependency
> {

    // MARK: - Dependencies


    // MARK: - Child Components

}

// MARK: - Plugin List

internal final class SettingsPluginListImp: PluginList
<
    SettingsPluginListKeyType,
    SettingsPluginListComponent,
    SettingsBuilder,
    SettingsPluginListStateType
> {

    override internal func plugins(
        component: SettingsPluginListComponent
    ) -> KeyValuePairs<SettingsPluginListKeyType, AnyPlugin> {
        [:]
//        [
//            "example": AnyPlugin(ExamplePluginImp(componentFactory: component.examplePluginComponentFactory).create())
//        ]
    }

    override internal func creationOrder(
        component: SettingsPluginListComponent,
        state: SettingsPluginListStateType
    ) -> [SettingsPluginListKeyType] {
        super.creationOrder(component: component, state: state)
    }
}

extension SettingsPluginListImp: SettingsPluginList {}
