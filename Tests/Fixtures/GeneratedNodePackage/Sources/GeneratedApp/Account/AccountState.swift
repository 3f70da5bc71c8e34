// swift-format-ignore-file
// In the shape of the Nodes generator's output (Custom UI framework); its template comments left out.
//
//  AccountState.swift
//  GeneratedApp
//

internal struct AccountState: Equatable {

    // Not generated: what the Account context's session subscription counts.
    internal var sessionCount: Int = 0

    internal static func initialState() -> Self {
        Self()
    }
}
