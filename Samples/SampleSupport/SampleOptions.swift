#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The command line that every sample shares, parsed by hand (a host app links no
/// argument parser):
///
/// ```
/// sample-NAME [--hold SECONDS] [--leak KIND] [--quiet] [sample-specific options]
/// ```
///
/// A mistake prints one line and the usage on standard error and exits with status 2.
public struct SampleOptions: Equatable, Sendable {
    /// How long to keep running after the script, so that `nodescope attach` can look; nil: exit.
    public var holdSeconds: Double?
    /// The leak to inject, one of the sample's kinds; nil: none.
    public var leak: String?
    /// Print nothing but errors.
    public var quiet = false
    /// The values of the sample's own options that take one (such as `--nodes`), by name.
    public var values: [String: String] = [:]
    /// The sample's own flags that were given (such as `--feed-v2`).
    public var flags: Set<String> = []

    /// What a sample accepts beyond the shared options.
    public struct Specification: Sendable {
        /// The program's name, for messages.
        public var program: String
        /// One line on what the sample is.
        public var summary: String
        /// The kinds that `--leak` accepts, each with what it does.
        public var leakKinds: [(kind: String, help: String)]
        /// Options that take a value, each with its value's name and what it does.
        public var valueOptions: [(name: String, value: String, help: String)] = []
        /// Flags, each with what it does.
        public var flagOptions: [(name: String, help: String)] = []

        /// Describes a sample's command line.
        public init(
            program: String, summary: String, leakKinds: [(kind: String, help: String)],
            valueOptions: [(name: String, value: String, help: String)] = [],
            flagOptions: [(name: String, help: String)] = []
        ) {
            self.program = program
            self.summary = summary
            self.leakKinds = leakKinds
            self.valueOptions = valueOptions
            self.flagOptions = flagOptions
        }

        /// The usage text printed by `--help` and after a mistake.
        public var usage: String {
            var optionLines: [(String, String)] = [
                ("--hold SECONDS", "after the script, keep running this long (SIGTERM ends it early)"),
                ("--leak KIND", "inject one real leak: " + leakKinds.map(\.kind).joined(separator: ", ")),
                ("--quiet", "print nothing but errors"),
            ]
            optionLines += valueOptions.map { ("\($0.name) \($0.value)", $0.help) }
            optionLines += flagOptions.map { ($0.name, $0.help) }
            optionLines.append(("--help", "show this help"))
            let width = optionLines.map(\.0.count).max() ?? 0
            var lines = ["\(program): \(summary)", "", "usage: \(program) [options]", "", "options:"]
            for (option, help) in optionLines {
                lines.append("  " + option + String(repeating: " ", count: width - option.count + 2) + help)
            }
            lines.append("")
            lines.append("leak kinds:")
            let kindWidth = leakKinds.map(\.kind.count).max() ?? 0
            for (kind, help) in leakKinds {
                lines.append("  " + kind + String(repeating: " ", count: kindWidth - kind.count + 2) + help)
            }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// Creates empty options.
    public init() {}

    /// Parses `arguments` (without the program name); on a mistake prints it with the usage on
    /// standard error and exits with status 2, on `--help` prints the usage and exits with 0.
    public static func parse(_ arguments: [String], _ specification: Specification) -> SampleOptions {
        switch parseOrFail(arguments, specification) {
        case .success(.run(let options)):
            return options
        case .success(.help):
            SampleOutput.write(specification.usage, to: 1)
            exit(0)
        case .failure(let error):
            SampleOutput.write("\(specification.program): \(error.message)\n\n\(specification.usage)", to: 2)
            exit(2)
        }
    }

    /// A command-line mistake.
    public struct UsageError: Error, Equatable, Sendable {
        /// What was wrong, in one line.
        public var message: String

        /// An error with its message.
        public init(message: String) {
            self.message = message
        }
    }

    /// What a command line asks for.
    public enum Request: Equatable, Sendable {
        /// Run the sample with these options.
        case run(SampleOptions)
        /// Print the usage.
        case help
    }

    /// Parses `arguments` without exiting: the testable part of ``parse(_:_:)``.
    public static func parseOrFail(
        _ arguments: [String], _ specification: Specification
    ) -> Result<Request, UsageError> {
        var options = SampleOptions()
        // `--option=value` reads as `--option value`.
        var remaining = arguments.flatMap { argument -> [String] in
            guard argument.hasPrefix("--"), let equals = argument.firstIndex(of: "=") else { return [argument] }
            return [String(argument[..<equals]), String(argument[argument.index(after: equals)...])]
        }[...]
        func value(for option: String) -> Result<String, UsageError> {
            guard let value = remaining.popFirst(), !value.hasPrefix("--") else {
                return .failure(UsageError(message: "\(option) needs a value"))
            }
            return .success(value)
        }
        while let argument = remaining.popFirst() {
            switch argument {
            case "--help", "-h":
                return .success(.help)
            case "--quiet":
                options.quiet = true
            case "--hold":
                switch value(for: argument) {
                case .success(let text):
                    guard let seconds = Double(text), seconds >= 0, seconds <= Self.longestHold else {
                        return .failure(
                            UsageError(
                                message: "--hold needs a number of seconds from 0 to \(Int(Self.longestHold)), not '\(text)'"))
                    }
                    options.holdSeconds = seconds
                case .failure(let error):
                    return .failure(error)
                }
            case "--leak":
                switch value(for: argument) {
                case .success(let kind):
                    let kinds = specification.leakKinds.map(\.kind)
                    guard kinds.contains(kind) else {
                        return .failure(
                            UsageError(
                                message: "unknown leak kind '\(kind)'; the kinds are: \(kinds.joined(separator: ", "))"))
                    }
                    options.leak = kind
                case .failure(let error):
                    return .failure(error)
                }
            case _ where specification.valueOptions.contains { $0.name == argument }:
                switch value(for: argument) {
                case .success(let text): options.values[argument] = text
                case .failure(let error): return .failure(error)
                }
            case _ where specification.flagOptions.contains { $0.name == argument }:
                options.flags.insert(argument)
            default:
                return .failure(UsageError(message: "unknown option '\(argument)'"))
            }
        }
        return .success(.run(options))
    }

    /// The longest `--hold`: a year, in seconds.
    public static let longestHold: Double = 365 * 86_400

    /// The value of a sample-specific option as a whole number from 1 to `maximum`; exits with
    /// status 2 when it is not one.
    public func positiveInteger(_ option: String, _ specification: Specification, maximum: Int) -> Int? {
        guard let text = values[option] else { return nil }
        guard let number = Int(text), number > 0, number <= maximum else {
            SampleOutput.write(
                "\(specification.program): \(option) needs a whole number from 1 to \(maximum), not '\(text)'\n\n\(specification.usage)",
                to: 2)
            exit(2)
        }
        return number
    }
}
