import ArgumentParser

/// `nodescope check-guard --directory DIR -- CMD …` (hidden): what `check` starts in place of its
/// command, to tie the command's life to its own (``CheckGuard``). Not for use by hand: it
/// expects `check`'s pipes on descriptors 3 and 4.
struct CheckGuardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-guard", abstract: "Internal: runs a command for `nodescope check`.", shouldDisplay: false)

    @Option(help: "The socket directory of the check run, removed when check could not.")
    var directory: String?

    @Argument(parsing: .postTerminator, help: "The command.")
    var command: [String] = []

    func validate() throws {
        guard !command.isEmpty else { throw ValidationError("check-guard is started by nodescope check, with a command") }
    }

    func run() throws {
        CheckGuard.run(command: command, directory: directory)
    }
}
