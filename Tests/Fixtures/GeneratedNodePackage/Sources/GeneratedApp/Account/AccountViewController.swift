// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountViewController.swift
//  GeneratedApp
//

import AppUI
import NodesCombine
import Nodes

/// @mockable
@MainActor
internal protocol AccountReceiver: AnyObject {}

internal final class AccountViewController: AppViewController, StateObserver {

    internal weak var receiver: AccountReceiver?

    private var cancellables: Set<AnyCancellable> = .init()

    private let initialState: AccountViewState

    private let statePublisher: AnyPublisher<AccountViewState, Never>

    internal init(
        initialState: AccountViewState,
        statePublisher: AnyPublisher<AccountViewState, Never>
    ) {
        self.initialState = initialState
        self.statePublisher = statePublisher
            .removeDuplicates()
            .receive(on: DispatchQueue.main)
            .eraseToAnyPublisher()
        super.init()
    }

    override internal func viewDidLoad() {
        super.viewDidLoad()
        update(with: initialState)
    }

    override internal func viewWillAppear() {
        super.viewWillAppear()
        observe(statePublisher).store(in: &cancellables)
    }

    override internal func viewWillDisappear() {
        super.viewWillDisappear()
        cancellables.cancelAll()
    }

    internal func update(with viewState: AccountViewState) {
        // Add implementation to update the user interface when the view state changes.
    }
}

extension AccountViewController: AccountViewControllable {}
