import Synchronization

/// A marker for what a component needs from its parent.
public protocol Dependency: AnyObject {}

/// A dependency that provides nothing: the root component's.
public protocol EmptyDependency: Dependency {}

/// A place in the dependency graph, as a child component is made under it: code written for
/// Needle (`Component(parent: self)`, which the Nodes framework's generator renders) passes its
/// component as the child's parent scope.
public protocol Scope: AnyObject {
    /// The component type names from the root down to this scope (the root's path starts with
    /// `"^"`, as in Needle).
    var path: [String] { get }
}

/// A node of the dependency-injection graph: it holds what its parent provides (`dependency`)
/// and creates what its node's builder injects, sharing single instances through ``shared(_:_:)``.
///
/// A component is made either with its dependency (``init(dependency:)``) or, as code written
/// for Needle makes it, under a parent scope (``init(parent:)``): its dependency is then the one
/// registered for its path (``DependencyProviderRegistry``, how tests inject mocks), or else its
/// nearest ancestor component that conforms to `DependencyType` (`extension AppComponent:
/// AccountDependency {}`, what Needle's generated providers do for an app).
open class Component<DependencyType>: Scope {
    /// What the parent component provides.
    public let dependency: DependencyType
    /// The parent scope, held as Needle holds it (a child component keeps its parent alive).
    private let parent: Scope?
    private var sharedInstances: [String: Any] = [:]

    /// A component on top of its parent's dependency.
    public init(dependency: DependencyType) {
        self.dependency = dependency
        self.parent = nil
    }

    /// A component made under `parent`, its dependency found from its path (see the type's
    /// documentation). A component for which neither a registered dependency nor an ancestor
    /// provides one is a programming error: it stops with a message that names the path.
    public init(parent: Scope) {
        let path = parent.path + [Self.pathComponent]
        self.parent = parent
        if let registered = DependencyProviderRegistry.shared.dependency(forPath: path) as? DependencyType {
            self.dependency = registered
        } else if let provided = Self.nearestProvider(from: parent) {
            self.dependency = provided
        } else if let none = () as? DependencyType {
            self.dependency = none
        } else {
            preconditionFailure(
                "\(path.joined(separator: "->")): no dependency of type \(DependencyType.self); make an ancestor "
                    + "component conform to it or register one with DependencyProviderRegistry")
        }
    }

    /// The component type names from the root down to this component.
    public var path: [String] {
        (parent?.path ?? ["^"]) + [Self.pathComponent]
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

    /// This component type's name in paths (also how NodesTesting registers a mock for it).
    package static var pathComponent: String {
        String(describing: self).split(separator: ".").last.map(String.init) ?? String(describing: self)
    }

    /// The nearest of `scope` and its ancestors that is a `DependencyType`.
    private static func nearestProvider(from scope: Scope) -> DependencyType? {
        var current: Scope? = scope
        while let candidate = current {
            if let provider = candidate as? DependencyType { return provider }
            current = (candidate as? ParentScoped)?.parentScope
        }
        return nil
    }
}

/// A scope that knows its parent (every ``Component``), for the ancestor search.
private protocol ParentScoped {
    var parentScope: Scope? { get }
}

extension Component: ParentScoped {
    fileprivate var parentScope: Scope? { parent }
}

/// The root of a dependency graph.
open class BootstrapComponent: Component<Void> {
    /// A root component.
    public init() {
        super.init(dependency: ())
    }
}

/// Dependencies registered for component paths, ahead of the ancestor search: a test injects a
/// mock dependency for the component it builds (as Needle's registry lets NodesTesting do).
///
/// ```swift
/// DependencyProviderRegistry.shared.register(AccountDependencyMock(), forPath: ["^", "BootstrapComponent", "AccountComponent"])
/// ```
public final class DependencyProviderRegistry: Sendable {
    /// The one registry that ``Component/init(parent:)`` reads.
    public static let shared = DependencyProviderRegistry()

    private let entries = Mutex<[[String]: Entry]>([:])

    private init() {}

    /// Makes `dependency` the dependency of the component made at `path`.
    public func register(_ dependency: AnyObject, forPath path: [String]) {
        let entry = Entry(object: dependency)
        entries.withLock { $0[path] = entry }
    }

    /// Forgets the dependency registered at `path`.
    public func unregister(path: [String]) {
        entries.withLock { _ = $0.removeValue(forKey: path) }
    }

    /// The dependency registered at `path`, if any.
    public func dependency(forPath path: [String]) -> AnyObject? {
        entries.withLock { $0[path] }?.object
    }

    /// A registered dependency: handed, as with Needle, to the component made at its path on
    /// whichever thread makes it.
    private final class Entry: @unchecked Sendable {
        let object: AnyObject

        init(object: AnyObject) {
            self.object = object
        }
    }
}
