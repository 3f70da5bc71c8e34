/// A failure the CLI reports as one line on standard error and an exit code.
public struct CLIError: Error, Sendable, CustomStringConvertible {
    /// What a person should read.
    public let message: String
    /// The process exit code: 1 for "nothing to show" or a gate failure, 2 for usage and
    /// internal errors (DESIGN.md's exit codes).
    public let exitCode: Int32

    /// Creates an error.
    public init(_ message: String, exitCode: Int32 = 2) {
        self.message = message
        self.exitCode = exitCode
    }

    /// The message.
    public var description: String { message }
}
