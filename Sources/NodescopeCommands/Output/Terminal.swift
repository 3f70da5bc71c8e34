import Foundation
import Glibc
import Logging
import NodescopeReports
import NodescopeSocket
import Synchronization

/// Output conventions of the CLI: results on stdout, notes and errors on stderr, colours only
/// when stdout is a terminal (and `NO_COLOR` is unset).
package enum Terminal {
    static let isColorful: Bool = isatty(1) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    static func paint(_ text: String, _ color: Vocabulary.Color) -> String {
        Vocabulary.paint(text, color, enabled: isColorful)
    }

    /// Whether text written to standard error may have colours.
    static let isErrorColorful: Bool = isatty(2) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil

    /// JSON for people, with a final newline: sorted keys, indented.
    static func prettyJSON(_ value: some Encodable) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return ((try? encoder.encode(value)).map { String(decoding: $0, as: UTF8.self) } ?? "null") + "\n"
    }

    /// One line on standard error.
    static func note(_ line: String) {
        error("nodescope: " + line + "\n")
    }

    /// Writes `text` to standard error as is. A reader that has gone (`nodescope check … 2>&1 |
    /// head -1`) costs the text, never the process: Foundation's `FileHandle.write` traps there.
    package static func error(_ text: String) {
        StandardError.write(text)
    }

    /// Writes to stdout at once, so piped output arrives line by line. A reader that has gone
    /// (`nodescope ps | head -1`) ends the command quietly with status 0, as `git log | head` does;
    /// any other failure (`nodescope ps > /dev/full`) ends it with status 2 and says why.
    static func write(_ text: String) {
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(1, $0.baseAddress, $0.count) }
            if written > 0 {
                bytes = bytes.dropFirst(written)
            } else if written < 0, errno == EINTR || errno == EAGAIN {
                continue
            } else {
                if errno == EPIPE { quietExit() }
                // A full disk or a broken device is an error, not output that went nowhere.
                note("cannot write standard output: \(SystemErrorText.describe(written == 0 ? ENOSPC : errno))")
                Glibc.exit(2)
            }
        }
    }

    /// Scratch directories of the running command, removed when it ends early because its
    /// reader went away (see ``PrivateDirectory``).
    static let scratchDirectories = Mutex<Set<String>>([])

    /// For a command that may wait long between writes (`attach`): when standard output is a
    /// pipe whose reader goes away (`nodescope attach app | head -1`), the command ends quietly
    /// at once, not at its next write. A background thread waits in `poll` for the pipe's error
    /// (no events asked, so it sleeps until then); a terminal or a file is left alone.
    static func endWhenReaderLeaves() {
        var info = stat()
        guard fstat(1, &info) == 0, info.st_mode & S_IFMT == S_IFIFO else { return }
        let watcher = Thread {
            var entry = pollfd(fd: 1, events: 0, revents: 0)
            while true {
                let ready = poll(&entry, 1, -1)
                if ready > 0, entry.revents & Int16(POLLERR | POLLHUP) != 0 { quietExit() }
                if ready < 0, errno != EINTR { return }
            }
        }
        watcher.start()
    }

    /// Ends the command with status 0 because its reader went away, removing its scratch
    /// directories.
    static func quietExit() -> Never {
        for path in scratchDirectories.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: path) }
        Glibc.exit(0)
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
