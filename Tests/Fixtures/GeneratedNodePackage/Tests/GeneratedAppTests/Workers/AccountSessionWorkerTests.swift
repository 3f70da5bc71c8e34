// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountSessionWorkerTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import XCTest

final class AccountSessionWorkerTests: XCTestCase {

    private var worker: AccountSessionWorkerImp!

    override func setUp() {
        super.setUp()
        worker = AccountSessionWorkerImp()
    }

    override func tearDown() {
        worker = nil
        super.tearDown()
    }

    func testWorking() {
        expect { [self] in worker.isWorking } == false
        worker.start()
        expect { [self] in worker.isWorking } == true
        worker.stop()
        expect { [self] in worker.isWorking } == false
    }
}
