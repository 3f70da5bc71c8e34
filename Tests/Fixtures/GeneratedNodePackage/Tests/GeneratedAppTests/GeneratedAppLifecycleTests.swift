import AppUI
import Nimble
import Nodes
import NodesTesting
import XCTest

@testable import GeneratedApp

/// The app as it runs: the root node attached, the Account node opened from the root's view and
/// closed again. With GENERATED_FIXTURE_LEAK=1 the Account node leaks on close, and
/// `nodescope check` reports it under this test (NodesTestCase marks the test's nodes).
final class GeneratedAppLifecycleTests: NodesTestCase {

    @MainActor
    func testOpeningAndClosingTheAccount() async {
        let root: RootFlow = RootBuilderImp(componentFactory: { RootComponent() }).build()
        root.start()
        let view = try? XCTUnwrap(root.getViewController() as? RootViewController)
        view?.receiver?.accountButtonTapped()
        let rootFlow = root as? RootFlowImp
        expect(rootFlow?.subFlows(ofType: AccountFlow.self).count) == 1
        expect(view?.presented.count) == 1
        let accountView = view?.presented.first as? AppViewController
        expect(accountView?.isVisible) == true

        view?.receiver?.accountCloseButtonTapped()
        expect(rootFlow?.subFlows.isEmpty) == true
        expect(accountView?.isVisible) == false
        root.end()
        expect(root.isStarted) == false
    }
}
