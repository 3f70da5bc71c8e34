import NodescopeControl
import NodescopeReports

/// The one error type of the CLI: a line for standard error, the exit code of DESIGN.md, and the
/// error it came from, if any. Every command throws; the executable's `main` prints and exits.
package struct CLIError: Error, Sendable, CustomStringConvertible {
    /// What a person should read.
    package let message: String
    /// The process exit code: 1 for "nothing to show" or a gate failure, 2 for usage and
    /// internal errors (DESIGN.md's exit codes).
    package let exitCode: Int32
    /// The error this one reports, when it reports another.
    package let underlying: (any Error & Sendable)?

    /// Creates an error.
    package init(_ message: String, exitCode: Int32 = 2, underlying: (any Error & Sendable)? = nil) {
        self.message = message
        self.exitCode = exitCode
        self.underlying = underlying
    }

    /// The CLI's view of an error from below: the control client's failures and the collector's
    /// refusals map here, and only here, to messages and exit codes. Nil for errors the CLI does
    /// not know (ArgumentParser's own, which it reports itself).
    package init?(_ error: any Error) {
        switch error {
        case let error as CLIError:
            self = error
        case let error as ControlError:
            // Nothing there, or not ours to talk to: "nothing to show". A path that cannot be a
            // socket, or a peer that does not speak the protocol: a usage or internal error.
            let code: Int32 = error.kind == .pathTooLong || error.kind == .malformed ? 2 : 1
            self.init(error.message, exitCode: code, underlying: error)
        case let refusal as ControlClient.Refusal:
            self.init(refusal.description, exitCode: 1, underlying: refusal)
        case let error as ReportError:
            self.init(error.message, exitCode: 2, underlying: error)
        default:
            return nil
        }
    }

    /// The message.
    package var description: String { message }
}
