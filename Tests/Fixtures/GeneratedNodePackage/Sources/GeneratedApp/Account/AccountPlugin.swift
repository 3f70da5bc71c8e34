// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountPlugin.swift
//  GeneratedApp
//

import Nodes

// MARK: - Dependency

/// @mockable
@MainActor
public protocol AccountPluginDependency: Dependency {}

// MARK: - Component

public final class AccountPluginComponent: Component
<
    AccountPluginDependency
> {

    // MARK: - Dependencies


    // MARK: - Child Components


    fileprivate func componentFactory() -> AccountComponent {
        AccountComponent(parent: self)
    }
}

// MARK: - Plugin

internal final class AccountPluginImp: Plugin
<
    AccountPluginComponent,
    AccountBuilder,
    AccountPluginStateType
> {

    override internal func isEnabled(
        component: AccountPluginComponent,
        state: AccountPluginStateType
    ) -> Bool {
        true
    }

    override internal func build(
        component: AccountPluginComponent
    ) -> AccountBuilder {
        AccountBuilderImp(componentFactory: component.componentFactory)
    }
}

extension AccountPluginImp: AccountPlugin {}
