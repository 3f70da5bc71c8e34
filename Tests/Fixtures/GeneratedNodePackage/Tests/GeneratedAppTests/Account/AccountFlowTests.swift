// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountFlowTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import XCTest

final class AccountFlowTests: XCTestCase {

    private var contextMock: AccountContextInterfaceMock!
    private var viewControllableMock: AccountViewControllableMock!
    private var flow: AccountFlowImp!

    @MainActor
    override func setUp() async throws {
        try await super.setUp()
        contextMock = AccountContextInterfaceMock(isActive: true)
        viewControllableMock = AccountViewControllableMock()
        flow = AccountFlowImp(
            context: contextMock,
            viewController: viewControllableMock
        )
        expect { [self] in flow.isStarted } == true
    }

    @MainActor
    override func tearDown() async throws {
        contextMock = nil
        viewControllableMock = nil
        flow = nil
        try await super.tearDown()
    }

    @MainActor
    func testNotNil() async {
        expect { [self] in flow } != nil
    }
}
