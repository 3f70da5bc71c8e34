// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountViewControllerTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import NodesCombine
import XCTest

final class AccountViewControllerTests: XCTestCase {

    @MainActor
    func testNotNil() async {
        let viewController: AccountViewController = givenViewController(
            viewState: AccountViewState()
        )
        expect(viewController) != nil
    }

    @MainActor
    private func givenViewController(
        viewState: AccountViewState
    ) -> AccountViewController {
        AccountViewController(
            initialState: viewState,
            statePublisher: Empty().eraseToAnyPublisher()
        )
    }
}
