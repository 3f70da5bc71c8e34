// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  RootBuilder.swift
//  GeneratedApp
//

import Nodes

// MARK: - Component

public final class RootComponent: BootstrapComponent {

    // MARK: - Child Components

    fileprivate func accountPluginComponentFactory() -> AccountPluginComponent {
        AccountPluginComponent(parent: self)
    }
}

// What Needle's generated dependency providers do: the root provides its children's dependencies.
extension RootComponent: AccountPluginDependency {}
extension RootComponent: AccountDependency {}

// MARK: - Builder

internal final class RootBuilderImp: AbstractBuilder
<
    RootComponent,
    RootFlow,
    Void,
    Void
> {

    internal func build() -> RootFlow {
        build((), ())
    }

    override internal func build(
        component: RootComponent,
        dynamicBuildDependency: Void
    ) -> RootFlow {
        let context: RootContextImp = .init(workers: [])
        let viewController: RootViewController = .init()
        viewController.receiver = context
        let flow: RootFlowImp = .init(
            context: context,
            viewController: viewController,
            accountPlugin: AccountPluginImp(componentFactory: component.accountPluginComponentFactory)
        )
        context.flow = flow
        return flow
    }
}

extension RootBuilderImp: RootBuilder {}
