// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountAnalytics.swift
//  GeneratedApp
//

/// @mockable
internal protocol AccountAnalytics: AnyObject {}

internal final class AccountAnalyticsImp {}

extension AccountAnalyticsImp: AccountAnalytics {}
