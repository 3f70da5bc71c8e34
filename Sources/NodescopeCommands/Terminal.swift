import Foundation
import Logging

/// Output conventions of the CLI: results on stdout, notes and errors on stderr, colours only
/// when stdout is a terminal (and `NO_COLOR` is unset).
enum Terminal {
    static let isColorful: Bool = isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    enum Color: String {
        case red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36", gray = "90", bold = "1"
    }

    static func paint(_ text: String, _ color: Color) -> String {
        isColorful ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// One line on standard error.
    static func note(_ line: String) {
        FileHandle.standardError.write(Data(("nodescope: " + line + "\n").utf8))
    }

    /// Writes to stdout and flushes, so piped output arrives line by line.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}

extension Logger {
    /// A logger that prints nothing: the embedded collector of a one-shot command stays quiet.
    static var quiet: Logger {
        var logger = Logger(label: "nodescope.embedded", factory: { _ in SwiftLogNoOpLogHandler() })
        logger.logLevel = .critical
        return logger
    }
}
