import Nodes
import NodesTesting
import Testing

@MainActor
@Suite("Builders, components, headless views and state")
struct BuilderAndViewTests {
    final class AppComponent: BootstrapComponent {
        var counter = 0
        var session: [String] {
            shared {
                counter += 1
                return ["session \(counter)"]
            }
        }
    }

    final class ChildComponent: Component<AppComponent> {
        let userID: String
        init(parent: AppComponent, userID: String) {
            self.userID = userID
            super.init(dependency: parent)
        }
    }

    final class ChildBuilder: AbstractBuilder<ChildComponent, String, String, String> {
        override func build(component: ChildComponent, dynamicBuildDependency: String) -> String {
            "\(component.userID) \(dynamicBuildDependency) \(component.dependency.session[0])"
        }
    }

    @Test func builderMakesAComponentPerBuildWithDynamicDependencies() {
        let app = AppComponent()
        let builder = ChildBuilder { userID in ChildComponent(parent: app, userID: userID) }
        #expect(
            builder.build("listener", "u1")
                == "u1 listener session 1")
        #expect(
            builder.build("other", "u2")
                == "u2 other session 1", "shared instances are made once per component")
    }

    @Test func headlessViewsRecordPresentationsNavigationAndTabs() {
        let root = HeadlessViewController(title: "Root")
        let login = HeadlessViewController(title: "Login")
        root.present(login, withModalStyle: .sheet, animated: true)
        #expect(root.presentationChain == ["Root", "Login"])
        #expect(login.presentingViewController === root)
        root.dismiss(login)
        #expect(root.presentedViewController == nil)

        let navigation = NavigationController(root: HeadlessViewController(title: "Feed"))
        let detail = HeadlessViewController(title: "Detail")
        navigation.push(detail, animated: true)
        #expect(navigation.viewControllers.map(HeadlessViewController.title(of:)) == ["Feed", "Detail"])
        navigation.pop(detail, animated: true)
        #expect(navigation.viewControllers.count == 1)

        let tabs = HeadlessTabBarController()
        tabs.setViewControllers([navigation, HeadlessViewController(title: "Profile")], animated: false)
        tabs.selectedIndex = 1
        #expect(root.history.map(\.description) == ["presented Login (sheet)", "dismissed Login"])
        #expect(navigation.history.map(\.description) == ["pushed Detail", "popped Detail"])
        #expect(tabs.history.map(\.description) == ["set [Navigation, Profile]", "selected tab 1"])
    }

    @Test func stateFlowsThroughATransformToAViewWithoutCombine() {
        final class CounterView: WithViewState {
            var viewState: String?
            func update(with state: String) { viewState = state }
        }
        let state = ObservableState(1)
        let view = CounterView()
        let observation = state.observe(transform: ClosureTransform { "count \($0)" }, observer: view)
        #expect(view.viewState == "count 1")
        state.mutate { $0 += 1 }
        #expect(view.viewState == "count 2")
        observation.cancel()
        state.value = 5
        #expect(view.viewState == "count 2")
    }
}
