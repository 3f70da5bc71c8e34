// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountViewStateFactoryTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import XCTest

internal final class AccountViewStateFactoryTests: XCTestCase {

    private var viewStateFactory: AccountViewStateFactory!

    override func setUp() {
        super.setUp()
        viewStateFactory = AccountViewStateFactory()
    }

    override func tearDown() {
        viewStateFactory = nil
        super.tearDown()
    }

    func testNotNil() {
        expect { [self] in viewStateFactory(AccountState()) } != nil
    }
}
