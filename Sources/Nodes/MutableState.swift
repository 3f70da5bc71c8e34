/// A state value changed by applying a block of changes, in place or to a copy: several
/// properties change at once, and an observer sees one new value.
///
/// ```swift
/// struct ProfileState: MutableState { var name = ""; var isPremium = false }
/// state.apply { $0.name = "ada"; $0.isPremium = true }
/// ```
public protocol MutableState {
    /// Applies `changes` to the value in place.
    mutating func apply(_ changes: (inout Self) throws -> Void) rethrows
    /// A copy of the value with `changes` applied.
    func applying(_ changes: (inout Self) throws -> Void) rethrows -> Self
}

extension MutableState {
    /// Applies `changes` to the value in place.
    public mutating func apply(_ changes: (inout Self) throws -> Void) rethrows {
        self = try applying(changes)
    }

    /// A copy of the value with `changes` applied.
    public func applying(_ changes: (inout Self) throws -> Void) rethrows -> Self {
        var copy = self
        try changes(&copy)
        return copy
    }
}
