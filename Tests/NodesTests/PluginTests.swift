import Nodes
import Testing

@Suite("Plugins and plugin lists")
struct PluginTests {
    final class Flags {
        var enabled: Set<String>
        init(_ enabled: Set<String>) { self.enabled = enabled }
    }

    final class NamedPlugin: Plugin<Flags, String, Void> {
        let name: String
        let flags: Flags
        init(_ name: String, flags: Flags) {
            self.name = name
            self.flags = flags
            super.init(componentFactory: { flags })
        }
        override func isEnabled(component: Flags, state: Void) -> Bool { component.enabled.contains(name) }
        override func build(component: Flags) -> String { "\(name)Builder" }
    }

    final class Variants: PluginList<String, Flags, String, Void> {
        let flags: Flags
        init(_ flags: Flags) {
            self.flags = flags
            super.init(componentFactory: { flags })
        }
        override func plugins(component: Flags) -> [(key: String, plugin: any PluginCreating<String, Void>)] {
            ["A", "B", "C"].map { ($0, NamedPlugin($0, flags: component)) }
        }
    }

    final class VariantsWithDefault: PluginListWithDefault<String, Flags, String, Void> {
        init(_ flags: Flags) { super.init(componentFactory: { flags }) }
        override func plugins(component: Flags) -> [(key: String, plugin: any PluginCreating<String, Void>)] {
            ["A", "B"].map { ($0, NamedPlugin($0, flags: component)) }
        }
        override func createDefault(component: Flags) -> String { "DefaultBuilder" }
    }

    @Test func pluginCreatesOnlyWhenEnabled() {
        let flags = Flags(["A"])
        #expect(NamedPlugin("A", flags: flags).create() == "ABuilder")
        #expect(NamedPlugin("B", flags: flags).create() == nil)
        let overridden = NamedPlugin("B", flags: flags)
        overridden.override = { _, _ in true }
        #expect(overridden.create() == "BBuilder")
    }

    @Test func listCreateReturnsTheLastEnabled() {
        #expect(Variants(Flags(["A", "B"])).create(state: ()) == "BBuilder")
        #expect(Variants(Flags(["A", "C"])).create(state: ()) == "CBuilder")
        #expect(Variants(Flags([])).create(state: ()) == nil)
    }

    @Test func listCreateAllReturnsEveryEnabledInOrder() {
        #expect(Variants(Flags(["C", "A"])).createAll(state: ()) == ["ABuilder", "CBuilder"])
    }

    @Test func listLooksUpByKey() {
        let list = Variants(Flags(["A"]))
        #expect(list.create(key: "A", state: ()) == "ABuilder")
        #expect(list.create(key: "B", state: ()) == nil)
        #expect(list.create(key: "Z", state: ()) == nil)
        #expect(list.keys() == ["A", "B", "C"])
    }

    @Test func defaultIsPrependedAndUsedAsFallback() {
        #expect(VariantsWithDefault(Flags([])).create(state: ()) == "DefaultBuilder")
        #expect(VariantsWithDefault(Flags(["A"])).create(state: ()) == "ABuilder")
        #expect(VariantsWithDefault(Flags(["A", "B"])).createAll(state: ()) == ["DefaultBuilder", "ABuilder", "BBuilder"])
        #expect(VariantsWithDefault(Flags([])).createAll(state: ()) == ["DefaultBuilder"])
    }
}
