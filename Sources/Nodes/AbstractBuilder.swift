/// Creates a node: its flow (the build result), context, workers and view, from a fresh
/// component made for each build.
///
/// - `DynamicBuildDependency`: values the parent flow passes to the objects built (a listener,
///   an identifier); `Void` when none.
/// - `DynamicComponentDependency`: values the parent passes to the component; `Void` when none.
///
/// Subclasses override ``build(component:dynamicBuildDependency:)``.
open class AbstractBuilder<ComponentType, BuildType, DynamicBuildDependency, DynamicComponentDependency> {
    private let componentFactory: (DynamicComponentDependency) -> ComponentType

    /// A builder that makes its component with `componentFactory` at each build.
    public init(componentFactory: @escaping (DynamicComponentDependency) -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// Builds the node with both dynamic dependencies.
    public final func build(
        withDynamicBuildDependency dynamicBuildDependency: DynamicBuildDependency,
        dynamicComponentDependency: DynamicComponentDependency
    ) -> BuildType {
        build(component: componentFactory(dynamicComponentDependency), dynamicBuildDependency: dynamicBuildDependency)
    }

    /// Creates the node's objects. Subclasses must override it.
    open func build(component: ComponentType, dynamicBuildDependency: DynamicBuildDependency) -> BuildType {
        preconditionFailure("\(Self.self) must override build(component:dynamicBuildDependency:)")
    }
}

extension AbstractBuilder where DynamicComponentDependency == Void {
    /// A builder whose component needs no dynamic dependency.
    public convenience init(componentFactory: @escaping () -> ComponentType) {
        self.init(componentFactory: { (_: Void) in componentFactory() })
    }

    /// Builds the node with a dynamic build dependency.
    public final func build(withDynamicBuildDependency dynamicBuildDependency: DynamicBuildDependency) -> BuildType {
        build(withDynamicBuildDependency: dynamicBuildDependency, dynamicComponentDependency: ())
    }
}

extension AbstractBuilder where DynamicComponentDependency == Void, DynamicBuildDependency == Void {
    /// Builds the node.
    public final func build() -> BuildType {
        build(withDynamicBuildDependency: (), dynamicComponentDependency: ())
    }
}
