// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountAnalyticsTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import XCTest

final class AccountAnalyticsTests: XCTestCase {

    private var analytics: AccountAnalyticsImp!

    override func setUp() {
        super.setUp()
        analytics = AccountAnalyticsImp()
    }

    override func tearDown() {
        analytics = nil
        super.tearDown()
    }

    func testNotNil() {
        expect { [self] in analytics } != nil
    }
}
