/// A report input that cannot be used (a malformed baseline), as one line for a person.
public struct ReportError: Error, Sendable, CustomStringConvertible {
    /// What is wrong and where.
    public let message: String

    /// Creates an error.
    public init(_ message: String) {
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
