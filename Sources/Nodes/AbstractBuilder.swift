/// Creates a node: its flow (the build result), context, workers and view, from a fresh
/// component made for each build.
///
/// - `ComponentType`: the node's dependency-injection component.
/// - `BuildType`: what a build returns, usually the node's flow (through its protocol).
/// - `DynamicBuildDependencyType`: values the parent flow passes to the objects built (a
///   listener, an identifier); `Void` when none.
/// - `DynamicComponentDependencyType`: values the parent passes to the component; `Void` when
///   none.
///
/// Subclasses override ``build(component:dynamicBuildDependency:)`` and usually add a
/// `build(withListener:)` of their own that calls ``build(_:_:)``. The component factory must
/// make a new component for each build: reusing one raises an assertion (debug builds).
@preconcurrency @MainActor
open class AbstractBuilder<ComponentType, BuildType, DynamicBuildDependencyType, DynamicComponentDependencyType> {
    private weak var lastComponent: AnyObject?
    private let componentFactory: (DynamicComponentDependencyType) -> ComponentType

    /// A builder that makes its component with `componentFactory` at each build.
    public init(componentFactory: @escaping (DynamicComponentDependencyType) -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// Creates the node's objects. Subclasses must override it.
    open func build(component: ComponentType, dynamicBuildDependency: DynamicBuildDependencyType) -> BuildType {
        preconditionFailure("\(Self.self) must override build(component:dynamicBuildDependency:)")
    }

    /// Builds the node with both dynamic dependencies, from a new component.
    public final func build(
        _ dynamicBuildDependency: DynamicBuildDependencyType,
        _ dynamicComponentDependency: DynamicComponentDependencyType
    ) -> BuildType {
        let component = componentFactory(dynamicComponentDependency)
        let componentObject = component as AnyObject
        assert(componentObject !== lastComponent, "\(Self.self)'s component factory must make a new component each time")
        lastComponent = componentObject
        return build(component: component, dynamicBuildDependency: dynamicBuildDependency)
    }
}
