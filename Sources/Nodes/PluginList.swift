/// An ordered, keyed collection of plugins for versioning and A/B tests: later plugins win.
///
/// - ``create(state:)`` returns the result of the *last* enabled plugin;
/// - ``createAll(state:)`` returns every enabled plugin's result, in order;
/// - ``create(key:state:)`` returns one plugin's result when it is enabled.
///
/// Subclasses override ``plugins(component:)`` and may override
/// ``creationOrder(component:state:)``; keys must be unique (a repeated key raises an assertion
/// in debug builds). The component factory must make a new component for each call.
@preconcurrency @MainActor
open class PluginList<KeyType: Hashable, ComponentType, BuildType, StateType> {
    /// A plugin of the list, type-erased to what it creates.
    public final class AnyPlugin {
        private let make: (StateType) -> BuildType?

        /// A plugin that creates with `create`.
        public init(create: @escaping (StateType) -> BuildType?) {
            self.make = create
        }

        /// The build result for `state`, or nil when the plugin is not enabled.
        public func create(state: StateType) -> BuildType? {
            make(state)
        }
    }

    private weak var lastComponent: AnyObject?
    private let componentFactory: () -> ComponentType

    /// A list that makes a fresh component for each query.
    public init(componentFactory: @escaping () -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// The plugins by key. Subclasses must override it.
    open func plugins(component: ComponentType) -> KeyValuePairs<KeyType, AnyPlugin> {
        preconditionFailure("\(Self.self) must override plugins(component:)")
    }

    /// The keys in the order plugins are asked, last winning: the order of ``plugins(component:)``
    /// unless overridden. A key without a plugin is skipped.
    open func creationOrder(component: ComponentType, state: StateType) -> [KeyType] {
        plugins(component: component).map(\.key)
    }

    /// Every enabled plugin's result, in creation order.
    public func createAll(state: StateType) -> [BuildType] {
        createAll(component: makeComponent(), state: state)
    }

    /// The result of the last enabled plugin, or nil when none is enabled.
    public func create(state: StateType) -> BuildType? {
        create(component: makeComponent(), state: state)
    }

    /// The result of the plugin with `key`, when it exists and is enabled.
    public func create(key: KeyType, state: StateType) -> BuildType? {
        create(component: makeComponent(), key: key, state: state)
    }

    fileprivate func makeComponent() -> ComponentType {
        let component = componentFactory()
        let componentObject = component as AnyObject
        assert(componentObject !== lastComponent, "\(Self.self)'s component factory must make a new component each time")
        lastComponent = componentObject
        return component
    }

    fileprivate func createAll(component: ComponentType, state: StateType) -> [BuildType] {
        orderedPlugins(component: component, state: state).compactMap { $0.plugin.create(state: state) }
    }

    fileprivate func create(component: ComponentType, state: StateType) -> BuildType? {
        for entry in orderedPlugins(component: component, state: state).reversed() {
            if let result = entry.plugin.create(state: state) { return result }
        }
        return nil
    }

    fileprivate func create(component: ComponentType, key: KeyType, state: StateType) -> BuildType? {
        orderedPlugins(component: component, state: state).first { $0.key == key }?.plugin.create(state: state)
    }

    /// The plugins in creation order, each key once.
    private func orderedPlugins(component: ComponentType, state: StateType) -> [(key: KeyType, plugin: AnyPlugin)] {
        let plugins = plugins(component: component)
        let keys = creationOrder(component: component, state: state)
        var seen = Set<KeyType>()
        let uniqueKeys = keys.filter { seen.insert($0).inserted }
        assert(uniqueKeys.count == keys.count, "\(Self.self): plugin keys must be unique, got \(keys)")
        return uniqueKeys.compactMap { key in plugins.first { $0.key == key }.map { (key, $0.value) } }
    }
}

extension PluginList.AnyPlugin where StateType == Void {
    /// A plugin whose result (nil when not enabled) is evaluated at each creation.
    public convenience init(_ create: @escaping @autoclosure () -> BuildType?) {
        self.init(create: { (_: Void) in create() })
    }
}

extension PluginList where StateType == Void {
    /// Every enabled plugin's result, in creation order.
    public func createAll() -> [BuildType] { createAll(state: ()) }

    /// The result of the last enabled plugin, or nil when none is enabled.
    public func create() -> BuildType? { create(state: ()) }

    /// The result of the plugin with `key`, when it exists and is enabled.
    public func create(key: KeyType) -> BuildType? { create(key: key, state: ()) }
}

/// A plugin list with a default: the default comes first in ``createAll(state:)`` and is the
/// fallback of ``create(state:)`` and ``create(key:state:)``, which therefore always return a
/// result.
///
/// Subclasses override ``plugins(component:)`` and ``default(component:)``.
open class PluginListWithDefault<KeyType: Hashable, ComponentType, BuildType, StateType>:
    PluginList<KeyType, ComponentType, BuildType, StateType>
{
    /// The default's key and result. Subclasses must override it.
    open func `default`(component: ComponentType) -> (key: KeyType, instance: BuildType) {
        preconditionFailure("\(Self.self) must override default(component:)")
    }

    /// The default's result, then every enabled plugin's, in creation order.
    public override func createAll(state: StateType) -> [BuildType] {
        let component = makeComponent()
        return [`default`(component: component).instance] + createAll(component: component, state: state)
    }

    /// The last enabled plugin's result, or the default's.
    public override func create(state: StateType) -> BuildType {
        let component = makeComponent()
        return create(component: component, state: state) ?? `default`(component: component).instance
    }

    /// The default's result for the default's key, else the plugin's with `key` when it is
    /// enabled, else the default's.
    public override func create(key: KeyType, state: StateType) -> BuildType {
        let component = makeComponent()
        let fallback = `default`(component: component)
        if key == fallback.key { return fallback.instance }
        return create(component: component, key: key, state: state) ?? fallback.instance
    }
}

extension PluginListWithDefault where StateType == Void {
    /// The last enabled plugin's result, or the default's.
    public func create() -> BuildType { create(state: ()) }

    /// The plugin's result with `key` when enabled, else the default's.
    public func create(key: KeyType) -> BuildType { create(key: key, state: ()) }
}
