// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  SettingsPluginListTests.swift
//  GeneratedAppTests
//

@testable import GeneratedApp
import Nimble
import NodesTesting
import XCTest

final class SettingsPluginListTests: XCTestCase {

    private var pluginList: SettingsPluginListImp!

    @MainActor
    override func setUp() async throws {
        try await super.setUp()
        pluginList = SettingsPluginListImp(componentFactory: injectComponent { parent in
            SettingsPluginListComponent(parent: parent)
        } with: {
            // swiftlint:disable:next direct_return
            let dependency: SettingsPluginListDependencyMock = .init()
            // dependency.<dependencyName> = <dependencyName>Mock
            return dependency
        })
    }

    @MainActor
    override func tearDown() async throws {
        pluginList = nil
        try await super.tearDown()
    }

    @MainActor
    func testCreateAll() async {
        expect { [self] in pluginList.createAll() }.to(beEmpty())
    }

    @MainActor
    func testCreate() async {
        expect { [self] in pluginList.create() } == nil
    }

    @MainActor
    func testCreateWithKey() async {
        expect { [self] in pluginList.create(key: "<key>") } == nil
    }
}
