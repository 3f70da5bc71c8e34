/// A report input that cannot be used (a malformed baseline), as one line for a person.
package struct ReportError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and where.
    package let message: String

    /// Creates an error.
    package init(_ message: String) {
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
