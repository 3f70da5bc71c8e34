#if canImport(XCTest)
import XCTest

/// Mock dependencies for components made under a scope, as the Nodes framework's generated tests
/// inject them: each `injectComponent(ofType:with:)` registers a dependency for the path of a
/// component of that type made under the scope, and the test's teardown takes it back.
@MainActor
public final class DependencyProviderRegistrationBuilder {
    private let path: [String]
    private let registration: (_ path: [String], _ dependency: AnyObject) -> Void

    init(scope: Scope, registration: @escaping (_ path: [String], _ dependency: AnyObject) -> Void) {
        self.path = scope.path
        self.registration = registration
    }

    /// Makes `dependency` the dependency of a `T` made under the builder's scope.
    @discardableResult
    public func injectComponent<T: Component<U>, U>(ofType type: T.Type, with dependency: @autoclosure () -> U) -> Self {
        injectComponent(ofType: type, with: dependency)
    }

    /// Makes what `dependency` returns the dependency of a `T` made under the builder's scope.
    @discardableResult
    public func injectComponent<T: Component<U>, U>(ofType type: T.Type, with dependency: () -> U) -> Self {
        registration(path + [type.pathComponent], dependency() as AnyObject)
        return self
    }
}

extension XCTestCase {
    /// A factory of the component that `componentFactory` makes under a `BootstrapComponent`,
    /// whose dependency is the one `dependency` returns, until the test ends: how a generated
    /// builder test gives its builder a mock dependency.
    ///
    /// ```swift
    /// let builder = AccountBuilderImp(componentFactory: injectComponent(componentFactory: AccountComponent.init) {
    ///     AccountDependencyMock()
    /// })
    /// ```
    @MainActor
    public func injectComponent<T: Component<U>, U>(
        componentFactory: @escaping (_ parent: Scope) -> T, with dependency: () -> U
    ) -> () -> T {
        injectComponents(descendingFrom: BootstrapComponent()).injectComponent(ofType: T.self, with: dependency)
        return { componentFactory(BootstrapComponent()) }
    }

    /// A builder that registers mock dependencies for components made under `scope`.
    @MainActor
    public func injectComponents(descendingFrom scope: @autoclosure () -> Scope) -> DependencyProviderRegistrationBuilder {
        injectComponents(descendingFrom: scope)
    }

    /// A builder that registers mock dependencies for components made under the scope that
    /// `scope` returns; each registration ends with the test.
    @MainActor
    public func injectComponents(descendingFrom scope: () -> Scope) -> DependencyProviderRegistrationBuilder {
        DependencyProviderRegistrationBuilder(scope: scope()) { [weak self] path, dependency in
            DependencyProviderRegistry.shared.register(dependency, forPath: path)
            self?.addTeardownBlock { DependencyProviderRegistry.shared.unregister(path: path) }
        }
    }
}
#endif
