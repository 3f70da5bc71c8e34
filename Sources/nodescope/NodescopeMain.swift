import ArgumentParser
import Foundation
import Logging
import NodescopeCommands

/// The `nodescope` executable: parses, runs, and ends every command the same way: a command's
/// own result as an `ExitCode` (check's verdict), a ``CLIError`` (or an error it maps) as one line
/// and its code, ArgumentParser's usage errors as its message and 2.
@main
enum NodescopeMain {
    static func main() async {
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        do {
            var command = try NodescopeCLI.parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch let code as ExitCode {
            exit(code.rawValue)
        } catch {
            if let failure = CLIError(error) {
                Terminal.error("nodescope: \(failure.message)\n")
                exit(failure.exitCode)
            }
            let code = NodescopeCLI.exitCode(for: error)
            if code == .success {
                print(NodescopeCLI.fullMessage(for: error))
                exit(0)
            }
            Terminal.error(NodescopeCLI.fullMessage(for: error) + "\n")
            // Usage errors and anything unforeseen are 2, as DESIGN.md says.
            exit(code == .validationFailure || code == .failure ? 2 : code.rawValue)
        }
    }
}
