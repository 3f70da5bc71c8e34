/// Anything that may create a build result for a state: a ``Plugin``, or a list's default.
public protocol PluginCreating<BuildType, StateType> {
    /// What it creates, usually a builder.
    associatedtype BuildType
    /// What decides whether it is enabled.
    associatedtype StateType
    /// The build result when enabled for `state`, else nil.
    func create(state: StateType) -> BuildType?
}

/// A feature gate: creates its node's builder only when enabled for a state (an experiment, a
/// flag, the user's data).
///
/// Subclasses override ``isEnabled(component:state:)`` and ``build(component:)``.
open class Plugin<ComponentType, BuildType, StateType>: PluginCreating {
    private let componentFactory: () -> ComponentType

    /// For tests: when set, decides enablement instead of ``isEnabled(component:state:)``.
    public final var override: ((ComponentType, StateType) -> Bool)?

    /// A plugin that makes a fresh component for each decision.
    public init(componentFactory: @escaping () -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// The build result when the plugin is enabled for `state`, else nil.
    public final func create(state: StateType) -> BuildType? {
        let component = componentFactory()
        let enabled = override?(component, state) ?? isEnabled(component: component, state: state)
        return enabled ? build(component: component) : nil
    }

    /// Whether the plugin is enabled. Subclasses must override it.
    open func isEnabled(component: ComponentType, state: StateType) -> Bool {
        preconditionFailure("\(Self.self) must override isEnabled(component:state:)")
    }

    /// Creates the build result. Subclasses must override it.
    open func build(component: ComponentType) -> BuildType {
        preconditionFailure("\(Self.self) must override build(component:)")
    }
}

extension Plugin where StateType == Void {
    /// The build result when enabled.
    public func create() -> BuildType? { create(state: ()) }
}
