import ArgumentParser
import Foundation
import NodescopeCollector
import NodescopeWire

/// Where the collector is, shared by every command that talks to one.
package struct ConnectionOptions: ParsableArguments {
    /// The socket path; the protocol's default when not given.
    @Option(
        name: .long,
        help:
            "The collector's socket (default: $NODESCOPE_SOCKET, else $XDG_RUNTIME_DIR/nodescope/collector.sock, else /tmp/nodescope-$UID/collector.sock)."
    )
    package var socket: String?

    /// Creates options with defaults.
    package init() {}

    /// The socket path in force, made absolute: a relative `--socket` (or `NODESCOPE_SOCKET`)
    /// is taken from the working directory.
    package var socketPath: String {
        let path =
            socket
            ?? CollectorSocketPath.resolve(
                environment: { ProcessInfo.processInfo.environment[$0] }, uid: UInt32(getuid()))
        guard !path.isEmpty, !path.hasPrefix("/") else { return path }
        return FileManager.default.currentDirectoryPath + "/" + path
    }

    /// Refuses a `--socket` that names no file: empty, or with a NUL byte (either would be an
    /// abstract socket, which any user may reach).
    package func validate() throws {
        guard let socket else { return }
        guard !socket.isEmpty else {
            throw ValidationError("--socket is empty; name the socket file, e.g. --socket ~/.nodescope/collector.sock")
        }
        guard !socket.utf8.contains(0) else { throw ValidationError("--socket holds a NUL byte; name a file without one") }
    }
}

/// How long a command waits for a process to connect when no daemon is running.
package struct WaitOptions: ParsableArguments {
    /// Seconds to wait.
    @Option(
        name: .long, parsing: .unconditional,
        help: "Seconds to wait for the process to connect (to the daemon, or to the embedded collector that starts when no daemon runs).")
    package var wait: Double = 10

    /// Creates options with defaults.
    package init() {}

    /// Rejects waits that are negative, infinite or absurdly long.
    package func validate() throws {
        guard wait.isFinite, wait >= 0, wait <= 86_400 else {
            throw ValidationError("--wait must be a number of seconds from 0 to 86400")
        }
    }
}

/// A duration such as `1s`, `500ms`, `1.5`, `2m`.
package struct DurationArgument: ExpressibleByArgument, Sendable {
    /// The duration in nanoseconds.
    package let nanoseconds: UInt64

    /// Parses `1s`, `500ms`, `2m` or a plain number of seconds.
    package init?(argument: String) {
        let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("s", 1e9), ("m", 60e9)]
        var text = argument.trimmingCharacters(in: .whitespaces)
        var scale = 1e9
        for (suffix, factor) in units where text.hasSuffix(suffix) {
            text.removeLast(suffix.count)
            scale = factor
            break
        }
        guard let value = Double(text), value >= 0, value * scale < 1e18 else { return nil }
        nanoseconds = UInt64(value * scale)
    }

    /// How `--help` shows a default: `1s`, `500ms`, `10m`.
    package var defaultValueDescription: String {
        if nanoseconds % 60_000_000_000 == 0, nanoseconds > 0 { return "\(nanoseconds / 60_000_000_000)m" }
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000)s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        return "\(Double(nanoseconds) / 1e9)s"
    }
}
