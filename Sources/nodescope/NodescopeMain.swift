import ArgumentParser
import Foundation
import Logging
import NodescopeCommands

/// The `nodescope` executable: parses, runs, and turns failures into one line and an exit code
/// (2 for usage and internal errors; a command's own codes otherwise).
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
        } catch let error as CLIError {
            FileHandle.standardError.write(Data("nodescope: \(error.message)\n".utf8))
            exit(error.exitCode)
        } catch {
            let code = NodescopeCLI.exitCode(for: error)
            if code == .success {
                print(NodescopeCLI.fullMessage(for: error))
                exit(0)
            }
            FileHandle.standardError.write(Data((NodescopeCLI.fullMessage(for: error) + "\n").utf8))
            exit(code == .validationFailure || code == .failure ? 2 : code.rawValue)
        }
    }
}
