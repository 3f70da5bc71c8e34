/// A marker for what a component needs from its parent.
public protocol Dependency: AnyObject {}

/// A dependency that provides nothing: the root component's.
public protocol EmptyDependency: Dependency {}

/// A node of the dependency-injection graph: it holds what its parent provides (`dependency`)
/// and creates what its node's builder injects, sharing single instances through ``shared(_:_:)``.
open class Component<DependencyType> {
    /// What the parent component provides.
    public let dependency: DependencyType
    private var sharedInstances: [String: Any] = [:]

    /// A component on top of its parent's dependency.
    public init(dependency: DependencyType) {
        self.dependency = dependency
    }

    /// One instance per component for the calling property: the first call creates it, later
    /// calls return it.
    ///
    /// ```swift
    /// var session: Session { shared { SessionImp() } }
    /// ```
    public final func shared<T>(_ key: String = #function, _ factory: () -> T) -> T {
        if let instance = sharedInstances[key] as? T { return instance }
        let instance = factory()
        sharedInstances[key] = instance
        return instance
    }
}

/// The root of a dependency graph.
open class BootstrapComponent: Component<Void> {
    /// A root component.
    public init() {
        super.init(dependency: ())
    }
}
