// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  RootViewController.swift
//  GeneratedApp
//

import AppUI
import Nodes

/// @mockable
@MainActor
internal protocol RootReceiver: AnyObject {
    func accountButtonTapped()
    func accountCloseButtonTapped()
}

internal final class RootViewController: AppViewController {

    internal weak var receiver: RootReceiver?
}

extension RootViewController: RootViewControllable {}
