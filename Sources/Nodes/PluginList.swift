/// An ordered, keyed collection of plugins for versioning and A/B tests: later plugins win.
///
/// - ``create(state:)`` returns the result of the *last* enabled plugin;
/// - ``createAll(state:)`` returns every enabled plugin's result, in order;
/// - ``create(key:state:)`` returns one plugin's result when it is enabled.
///
/// Subclasses override ``plugins(component:)``.
open class PluginList<KeyType: Hashable, ComponentType, BuildType, StateType> {
    private let componentFactory: () -> ComponentType

    /// A list that makes a fresh component for each query.
    public init(componentFactory: @escaping () -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// The plugins, in priority order (last wins). Subclasses must override it.
    open func plugins(component: ComponentType) -> [(key: KeyType, plugin: any PluginCreating<BuildType, StateType>)] {
        preconditionFailure("\(Self.self) must override plugins(component:)")
    }

    /// The result of the last enabled plugin, or nil when none is enabled.
    public final func create(state: StateType) -> BuildType? {
        query.lastEnabled(state: state)
    }

    /// The results of every enabled plugin, in list order.
    public final func createAll(state: StateType) -> [BuildType] {
        query.allEnabled(state: state)
    }

    /// The result of the plugin with `key`, when it exists and is enabled.
    public final func create(key: KeyType, state: StateType) -> BuildType? {
        query.enabled(key: key, state: state)
    }

    /// The keys of the list, in order.
    public final func keys() -> [KeyType] {
        query.entries().map(\.key)
    }

    private var query: PluginQuery<KeyType, BuildType, StateType> {
        PluginQuery { [unowned self] in plugins(component: componentFactory()) }
    }
}

/// The queries both plugin lists answer, over the entries a list returns.
struct PluginQuery<KeyType: Hashable, BuildType, StateType> {
    let entries: () -> [(key: KeyType, plugin: any PluginCreating<BuildType, StateType>)]

    func lastEnabled(state: StateType) -> BuildType? {
        for entry in entries().reversed() {
            if let result = entry.plugin.create(state: state) { return result }
        }
        return nil
    }

    func allEnabled(state: StateType) -> [BuildType] {
        entries().compactMap { $0.plugin.create(state: state) }
    }

    func enabled(key: KeyType, state: StateType) -> BuildType? {
        entries().first { $0.key == key }?.plugin.create(state: state)
    }
}

/// A plugin list with a default: the default is prepended to ``createAll(state:)`` and is the
/// fallback of ``create(state:)``, which therefore always returns a result.
///
/// Subclasses override ``plugins(component:)`` and ``createDefault(component:)``.
open class PluginListWithDefault<KeyType: Hashable, ComponentType, BuildType, StateType> {
    private let componentFactory: () -> ComponentType

    /// A list that makes a fresh component for each query.
    public init(componentFactory: @escaping () -> ComponentType) {
        self.componentFactory = componentFactory
    }

    /// The plugins, in priority order (last wins). Subclasses must override it.
    open func plugins(component: ComponentType) -> [(key: KeyType, plugin: any PluginCreating<BuildType, StateType>)] {
        preconditionFailure("\(Self.self) must override plugins(component:)")
    }

    /// The default result. Subclasses must override it.
    open func createDefault(component: ComponentType) -> BuildType {
        preconditionFailure("\(Self.self) must override createDefault(component:)")
    }

    /// The default result.
    public final func createDefault() -> BuildType {
        createDefault(component: componentFactory())
    }

    /// The last enabled plugin's result, or the default.
    public final func create(state: StateType) -> BuildType {
        query.lastEnabled(state: state) ?? createDefault()
    }

    /// The default, then every enabled plugin's result.
    public final func createAll(state: StateType) -> [BuildType] {
        [createDefault()] + query.allEnabled(state: state)
    }

    /// The result of the plugin with `key`, when it exists and is enabled.
    public final func create(key: KeyType, state: StateType) -> BuildType? {
        query.enabled(key: key, state: state)
    }

    /// The keys of the list, in order.
    public final func keys() -> [KeyType] {
        query.entries().map(\.key)
    }

    private var query: PluginQuery<KeyType, BuildType, StateType> {
        PluginQuery { [unowned self] in plugins(component: componentFactory()) }
    }
}
