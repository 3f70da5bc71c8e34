/// A feature gate: creates its node's builder only when enabled for a state (an experiment, a
/// flag, the user's data).
///
/// Subclasses override ``isEnabled(component:state:)`` and ``build(component:)``. The
/// component factory must make a new component for each call: reusing one raises an assertion
/// (debug builds).
@preconcurrency @MainActor
open class Plugin<ComponentType, BuildType, StateType> {
    private weak var lastComponent: AnyObject?
    private let componentFactory: () -> ComponentType

    /// A plugin that makes a fresh component for each decision.
    public init(componentFactory: @escaping () -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// Whether the plugin is enabled. Subclasses must override it.
    open func isEnabled(component: ComponentType, state: StateType) -> Bool {
        preconditionFailure("\(Self.self) must override isEnabled(component:state:)")
    }

    /// Creates the build result. Subclasses must override it.
    open func build(component: ComponentType) -> BuildType {
        preconditionFailure("\(Self.self) must override build(component:)")
    }

    /// The build result when the plugin is enabled for `state`, else nil.
    public func create(state: StateType) -> BuildType? {
        let component = makeComponent()
        guard isEnabled(component: component, state: state) else { return nil }
        return build(component: component)
    }

    /// The build result whether or not the plugin is enabled (for tests and debug menus).
    public func override() -> BuildType {
        build(component: makeComponent())
    }

    private func makeComponent() -> ComponentType {
        let component = componentFactory()
        let componentObject = component as AnyObject
        assert(componentObject !== lastComponent, "\(Self.self)'s component factory must make a new component each time")
        lastComponent = componentObject
        return component
    }
}

extension Plugin where StateType == Void {
    /// The build result when enabled.
    public func create() -> BuildType? { create(state: ()) }
}
