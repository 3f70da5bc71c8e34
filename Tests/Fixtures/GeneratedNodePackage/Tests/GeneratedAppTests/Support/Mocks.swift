//
//  Mocks.swift
//  GeneratedAppTests
//
//  The mocks of the protocols marked `/// @mockable`, in the shape Mockolo generates them (a
//  Nodes app generates this file with Mockolo; this fixture writes the few it needs).
//

import Nodes

@testable import GeneratedApp

final class AccountContextInterfaceMock: AccountContextInterface {
    init() {}
    init(isActive: Bool = false) {
        self.isActive = isActive
    }

    private(set) var isActiveSetCallCount = 0
    var isActive: Bool = false { didSet { isActiveSetCallCount += 1 } }

    private(set) var activateCallCount = 0
    var activateHandler: (() -> Void)?
    func activate() {
        activateCallCount += 1
        if let activateHandler {
            activateHandler()
        }
    }

    private(set) var deactivateCallCount = 0
    var deactivateHandler: (() -> Void)?
    func deactivate() {
        deactivateCallCount += 1
        if let deactivateHandler {
            deactivateHandler()
        }
    }
}

final class AccountViewControllableMock: AccountViewControllable {
    init() {}
}

final class AccountListenerMock: AccountListener {
    init() {}
}

final class AccountDependencyMock: AccountDependency {
    init() {}
}

final class AccountAnalyticsMock: AccountAnalytics {
    init() {}
}

final class AccountPluginDependencyMock: AccountPluginDependency {
    init() {}
}

final class SettingsPluginListDependencyMock: SettingsPluginListDependency {
    init() {}
}
