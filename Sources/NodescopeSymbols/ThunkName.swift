/// What a stored function pointer's symbol says about the closure: Swift stores a closure value as
/// a pointer to a *partial apply forwarder* (mangled name ending in `TA`) that calls the closure's
/// own function (the same name without `TA`). Merged functions add `Tm`; LLVM may add a `.N` or
/// `.llvm.N` suffix to a local symbol.
enum ThunkName {
    /// The name of the function that `symbol` forwards to, when it is a partial apply forwarder
    /// (possibly merged) of a named function; nil for any other symbol.
    static func forwardedFunction(of symbol: String) -> String? {
        var name = Substring(unsuffixed(symbol))
        guard name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_T") else { return nil }
        if name.hasSuffix("Tm") { name = name.dropLast(2) }
        guard name.hasSuffix("TA") else { return nil }
        name = name.dropLast(2)
        // A forwarder of a reabstraction thunk (`TR`) forwards to the thunk, not to the closure.
        guard name.count > 2, !name.hasSuffix("TR"), !name.hasSuffix("Tr") else { return nil }
        return String(name)
    }

    /// Whether `symbol` (or the function a forwarder of it calls) is a thunk of the compiler's,
    /// a reabstraction thunk (`TR`, `Tr`) above all, rather than a function a developer wrote.
    static func isThunk(_ symbol: String) -> Bool {
        var name = Substring(unsuffixed(symbol))
        guard name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_T") else { return false }
        if name.hasSuffix("Tm") { name = name.dropLast(2) }
        if name.hasSuffix("TA") { name = name.dropLast(2) }
        return name.hasSuffix("TR") || name.hasSuffix("Tr")
    }

    /// `symbol` without a merged-function `Tm` suffix, when it has one; nil otherwise.
    static func unmerged(_ symbol: String) -> String? {
        let name = unsuffixed(symbol)
        guard name.hasPrefix("$s"), name.hasSuffix("Tm"), !name.hasSuffix("TATm"), name.count > 4 else { return nil }
        return String(name.dropLast(2))
    }

    /// `symbol` without LLVM's `.N` or `.llvm.N` suffix (a mangled name has no dot).
    static func unsuffixed(_ symbol: String) -> String {
        guard symbol.hasPrefix("$s") || symbol.hasPrefix("$S") || symbol.hasPrefix("_T"),
            let dot = symbol.firstIndex(of: ".")
        else { return symbol }
        return String(symbol[..<dot])
    }
}
