// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountBuilderTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import NodesTesting
import XCTest

final class AccountBuilderTests: XCTestCase {

    private var listenerMock: AccountListenerMock!
    private var builder: AccountBuilderImp!

    @MainActor
    override func setUp() async throws {
        try await super.setUp()
        listenerMock = AccountListenerMock()
        builder = AccountBuilderImp(componentFactory: injectComponent { parent in
            AccountComponent(parent: parent)
        } with: {
            // swiftlint:disable:next direct_return
            let dependency: AccountDependencyMock = .init()
            // dependency.<dependencyName> = <dependencyName>Mock
            return dependency
        })
    }

    @MainActor
    override func tearDown() async throws {
        listenerMock = nil
        builder = nil
        try await super.tearDown()
    }

    @MainActor
    func testCreate() async {
        expect { [self] in builder.build(withListener: listenerMock) } != nil
    }
}
