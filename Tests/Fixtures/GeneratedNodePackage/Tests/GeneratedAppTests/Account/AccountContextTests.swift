// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountContextTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import Nodes
import NodesTesting
import XCTest

final class AccountContextTests: XCTestCase {

    private var storeMock: StateStoreMock<AccountState>!
    private var analyticsMock: AccountAnalyticsMock!

    @MainActor
    override func setUp() async throws {
        try await super.setUp()
        storeMock = StateStoreMock(
            state: AccountState()
        )
        analyticsMock = AccountAnalyticsMock()
    }

    @MainActor
    override func tearDown() async throws {
        storeMock = nil
        analyticsMock = nil
        try await super.tearDown()
    }

    @MainActor
    func testNotNil() async {
        let context: AccountContextImp = givenContext()
        expect(context) != nil
    }

    @MainActor
    func testWorkersIsEmpty() async {
        let context: AccountContextImp = givenContext()
        expect(context.workers).to(beEmpty())
    }

    @MainActor
    func testActivation() async {
        let context: AccountContextImp = givenContext()
        expect(context.isActive) == false
        context.activate()
        expect(context.isActive) == true
        context.deactivate()
        expect(context.isActive) == false
    }

    @MainActor
    private func givenContext(
        workers: [Worker] = []
    ) -> AccountContextImp {
        AccountContextImp(
            workers: workers,
            store: storeMock,
            analytics: analyticsMock
        )
    }
}
