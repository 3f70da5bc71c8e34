import Nodes
import Testing

/// Components made as Needle makes them, `Component(parent:)`, as the Nodes framework's
/// generator renders builders and plugins: the path, and where the dependency comes from.
@Suite("Components made under a parent scope", .serialized)  // the registry is process-wide
struct ComponentScopeTests {
    private protocol SessionDependency: Dependency {
        var userName: String { get }
    }

    private final class RootScopeComponent: BootstrapComponent, SessionDependency {
        let userName = "ada"

        func pluginComponent() -> PluginScopeComponent { PluginScopeComponent(parent: self) }
    }

    private final class PluginScopeComponent: Component<Void> {
        func sessionComponent() -> SessionScopeComponent { SessionScopeComponent(parent: self) }
    }

    private final class SessionScopeComponent: Component<any SessionDependency> {}

    private final class SessionDependencyMock: SessionDependency {
        let userName = "mock"
    }

    @Test func aComponentsPathNamesItsAncestorsFromTheRoot() {
        let session = RootScopeComponent().pluginComponent().sessionComponent()
        #expect(session.path == ["^", "RootScopeComponent", "PluginScopeComponent", "SessionScopeComponent"])
    }

    @Test func theNearestAncestorThatConformsProvidesTheDependency() {
        let root = RootScopeComponent()
        let session = root.pluginComponent().sessionComponent()
        #expect(session.dependency.userName == "ada")
        #expect(session.dependency === root)
    }

    @Test func aRegisteredDependencyComesBeforeTheAncestorsUntilItIsUnregistered() {
        let path = ["^", "RootScopeComponent", "PluginScopeComponent", "SessionScopeComponent"]
        let mock = SessionDependencyMock()
        DependencyProviderRegistry.shared.register(mock, forPath: path)
        #expect(RootScopeComponent().pluginComponent().sessionComponent().dependency === mock)
        DependencyProviderRegistry.shared.unregister(path: path)
        #expect(RootScopeComponent().pluginComponent().sessionComponent().dependency.userName == "ada")
    }
}
