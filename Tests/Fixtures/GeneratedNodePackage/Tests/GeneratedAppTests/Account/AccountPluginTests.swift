// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountPluginTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import NodesTesting
import XCTest

final class AccountPluginTests: XCTestCase {

    private var plugin: AccountPluginImp!

    @MainActor
    override func setUp() async throws {
        try await super.setUp()
        plugin = AccountPluginImp(componentFactory: injectComponent { parent in
            AccountPluginComponent(parent: parent)
        } with: {
            // swiftlint:disable:next direct_return
            let dependency: AccountPluginDependencyMock = .init()
            // dependency.<dependencyName> = <dependencyName>Mock
            return dependency
        })
    }

    @MainActor
    override func tearDown() async throws {
        plugin = nil
        try await super.tearDown()
    }

    @MainActor
    func testCreate() async {
        expect { [self] in plugin.create() } != nil
    }

    @MainActor
    func testOverride() async {
        expect { [self] in plugin.override() } != nil
    }
}
