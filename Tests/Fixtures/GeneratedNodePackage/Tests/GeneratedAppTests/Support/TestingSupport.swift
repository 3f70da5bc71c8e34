//
//  TestingSupport.swift
//  GeneratedAppTests
//
//  What the generated tests take from the Nodes framework's NodesTesting that Nodescope's
//  NodesTesting does not give: `StateStoreMock`, which the framework builds on SwiftUI's
//  Observation, over this app's own `StateStore`. (`injectComponent(componentFactory:with:)`
//  comes from NodesTesting.)
//

import Nodes
import NodesTesting
import XCTest

@testable import GeneratedApp

/// A state store that counts the sets of its state.
@MainActor
final class StateStoreMock<State: Equatable>: StateStore {

    var state: State {
        didSet { stateSetCallCount += 1 }
    }

    private(set) var stateSetCallCount: Int = 0

    init(state: State) {
        self.state = state
    }
}
