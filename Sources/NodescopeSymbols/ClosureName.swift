/// A stored closure named the way a developer finds it: its symbol and its source line.
///
/// `symbol` is the simplified demangled name (`closure #1 in ProfileContextImp.didBecomeActive()`);
/// when only a thunk is known it says so in its own words (`partial apply for …`,
/// `reabstraction thunk helper …`). `file` is the path the debug information gives (an absolute
/// path, typically); `line` and `column` are nil when unknown (or 0: a compiler-generated place).
package struct ClosureName: Sendable, Equatable, Codable {
    /// The simplified demangled name of the function.
    package var symbol: String
    /// The source file, as the debug information names it; nil without debug information.
    package var file: String?
    /// The line, 1-based; nil when unknown.
    package var line: Int?
    /// The column, 1-based; nil when unknown.
    package var column: Int?
    /// Whether the function is a thunk of the compiler's (a reabstraction thunk), not a closure a
    /// developer wrote: the app's closure is in the thunk's context.
    package var isThunk: Bool

    /// Creates a name.
    package init(symbol: String, file: String? = nil, line: Int? = nil, column: Int? = nil, isThunk: Bool = false) {
        self.symbol = symbol
        self.file = file
        self.line = line
        self.column = column
        self.isThunk = isThunk
    }
}
