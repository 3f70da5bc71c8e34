import Nodes
import Testing

@MainActor
@Suite("Plugins and plugin lists")
struct PluginTests {
    final class Flags {
        var enabled: Set<String>
        init(_ enabled: Set<String>) { self.enabled = enabled }
    }

    final class NamedPlugin: Plugin<Flags, String, Void> {
        let name: String
        init(_ name: String, enabled: Set<String>) {
            self.name = name
            // A new component for each decision, as the framework asks.
            super.init(componentFactory: { Flags(enabled) })
        }
        override func isEnabled(component: Flags, state: Void) -> Bool { component.enabled.contains(name) }
        override func build(component: Flags) -> String { "\(name)Builder" }
    }

    final class Variants: PluginList<String, Flags, String, Void> {
        var order: [String]?
        init(_ enabled: Set<String>) { super.init(componentFactory: { Flags(enabled) }) }
        override func plugins(component: Flags) -> KeyValuePairs<String, AnyPlugin> {
            [
                "A": AnyPlugin(component.enabled.contains("A") ? "ABuilder" : nil),
                "B": AnyPlugin(component.enabled.contains("B") ? "BBuilder" : nil),
                "C": AnyPlugin(component.enabled.contains("C") ? "CBuilder" : nil),
            ]
        }
        override func creationOrder(component: Flags, state: Void) -> [String] {
            order ?? super.creationOrder(component: component, state: state)
        }
    }

    final class VariantsWithDefault: PluginListWithDefault<String, Flags, String, Void> {
        init(_ enabled: Set<String>) { super.init(componentFactory: { Flags(enabled) }) }
        override func plugins(component: Flags) -> KeyValuePairs<String, AnyPlugin> {
            [
                "A": AnyPlugin(create: { NamedPlugin("A", enabled: component.enabled).create(state: $0) }),
                "B": AnyPlugin(create: { NamedPlugin("B", enabled: component.enabled).create(state: $0) }),
            ]
        }
        override func `default`(component: Flags) -> (key: String, instance: String) {
            (key: "default", instance: "DefaultBuilder")
        }
    }

    @Test func pluginCreatesOnlyWhenEnabledAndOverrideBuildsAnyway() {
        #expect(NamedPlugin("A", enabled: ["A"]).create() == "ABuilder")
        let disabled = NamedPlugin("B", enabled: ["A"])
        #expect(disabled.create() == nil)
        #expect(disabled.override() == "BBuilder")
    }

    @Test func listCreateReturnsTheLastEnabled() {
        #expect(Variants(["A", "B"]).create() == "BBuilder")
        #expect(Variants(["A", "C"]).create(state: ()) == "CBuilder")
        #expect(Variants([]).create() == nil)
    }

    @Test func listCreateAllReturnsEveryEnabledInCreationOrder() {
        let list = Variants(["C", "A"])
        #expect(list.createAll() == ["ABuilder", "CBuilder"])
        list.order = ["C", "A"]
        #expect(list.createAll() == ["CBuilder", "ABuilder"])
        #expect(list.create() == "ABuilder", "the last of the creation order wins")
        list.order = []
        #expect(list.createAll().isEmpty)
    }

    @Test func listLooksUpByKey() {
        let list = Variants(["A"])
        #expect(list.create(key: "A") == "ABuilder")
        #expect(list.create(key: "B") == nil)
        #expect(list.create(key: "Z", state: ()) == nil)
        list.order = ["B"]
        #expect(list.create(key: "A") == nil, "a key left out of the creation order is not asked")
    }

    @Test func defaultComesFirstAndIsTheFallback() {
        #expect(VariantsWithDefault([]).create() == "DefaultBuilder")
        #expect(VariantsWithDefault(["A"]).create(state: ()) == "ABuilder")
        #expect(VariantsWithDefault(["A", "B"]).createAll(state: ()) == ["DefaultBuilder", "ABuilder", "BBuilder"])
        #expect(VariantsWithDefault([]).createAll(state: ()) == ["DefaultBuilder"])
        let list = VariantsWithDefault(["A"])
        #expect(list.create(key: "A") == "ABuilder")
        #expect(list.create(key: "B") == "DefaultBuilder", "a disabled plugin falls back to the default")
        #expect(list.create(key: "default") == "DefaultBuilder")
        #expect(list.create(key: "Z") == "DefaultBuilder")
    }
}
