// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountBuilder.swift
//  GeneratedApp
//

import NodesCombine
import Nodes

// MARK: - Dependency

/// @mockable
@MainActor
public protocol AccountDependency: Dependency {}

// MARK: - Dynamic Dependencies

internal typealias AccountDynamicBuildDependency = AccountListener

internal typealias AccountDynamicComponentDependency = Void

// MARK: - Component

public final class AccountComponent: Component
<
    AccountDependency
> {

    // MARK: - Dependencies


    private let dynamicDependency: AccountDynamicComponentDependency

    internal init(
        parent: Scope,
        dynamicDependency: AccountDynamicComponentDependency = ()
    ) {
        self.dynamicDependency = dynamicDependency
        super.init(parent: parent)
    }

    // MARK: - Child Components

}

// MARK: - Builder

internal final class AccountBuilderImp: AbstractBuilder
<
    AccountComponent,
    AccountFlow,
    AccountDynamicBuildDependency,
    AccountDynamicComponentDependency
> {

    internal func build(
        withListener listener: AccountListener
    ) -> AccountFlow {
        let dynamicBuildDependency: AccountDynamicBuildDependency = listener
        let dynamicComponentDependency: AccountDynamicComponentDependency = ()
        return build(dynamicBuildDependency, dynamicComponentDependency)
    }

    override internal func build(
        component: AccountComponent,
        dynamicBuildDependency: AccountDynamicBuildDependency
    ) -> AccountFlow {
        let listener: AccountListener = dynamicBuildDependency
        let store: Store<
            AccountState,
            AccountViewState
        > = .init(
            state: .initialState(),
            transform: AccountViewStateFactory()
        )
        let analytics: AccountAnalyticsImp = .init()
        let context: AccountContextImp = .init(
            workers: [AccountSessionWorkerImp()],
            store: store,
            analytics: analytics
        )
        context.listener = listener
        let viewController: AccountViewController = .init(
            initialState: store.viewState,
            statePublisher: store.viewStatePublisher
        )
        viewController.receiver = context
        let flow: AccountFlowImp = .init(
            context: context,
            viewController: viewController
        )
        context.flow = flow
        return flow
    }
}

extension AccountBuilderImp: AccountBuilder {}
