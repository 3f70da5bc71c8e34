#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NodescopeWire

/// Where the agent connects and whether it runs, from the environment (read once).
public struct AgentSettings: Sendable, Equatable {
    /// How the agent came to be enabled.
    public enum Mode: Sendable, Equatable {
        /// Off: `NODESCOPE=off`, or a release build with nothing asking for it.
        case disabled
        /// `NODESCOPE_SOCKET` or an API call named the socket.
        case explicit
        /// A debug build watching the default path, so a daemon started later attaches.
        case watchDefault
    }

    /// How the agent was enabled.
    public var mode: Mode
    /// The collector's socket path.
    public var socketPath: String

    /// Creates settings.
    public init(mode: Mode, socketPath: String) {
        self.mode = mode
        self.socketPath = socketPath
    }

    /// The settings the environment asks for: `NODESCOPE=off` disables; `NODESCOPE_SOCKET`
    /// names the socket; otherwise debug builds watch ``defaultSocketPath(environment:)`` and
    /// release builds stay off.
    public static func fromEnvironment(_ environment: (String) -> String? = Self.getEnvironment) -> AgentSettings {
        let path = defaultSocketPath(environment: environment)
        if let switchValue = environment("NODESCOPE")?.lowercased(), ["off", "0", "false", "no"].contains(switchValue) {
            return AgentSettings(mode: .disabled, socketPath: path)
        }
        if let explicit = environment("NODESCOPE_SOCKET"), !explicit.isEmpty {
            return AgentSettings(mode: .explicit, socketPath: explicit)
        }
        #if DEBUG
        return AgentSettings(mode: .watchDefault, socketPath: path)
        #else
        return AgentSettings(mode: .disabled, socketPath: path)
        #endif
    }

    /// The collector's socket: `NODESCOPE_SOCKET`, else `$XDG_RUNTIME_DIR/nodescope/collector.sock`,
    /// else `/tmp/nodescope-$UID/collector.sock`.
    public static func defaultSocketPath(environment: (String) -> String? = Self.getEnvironment) -> String {
        CollectorSocketPath.resolve(environment: environment, uid: getuid())
    }

    /// Reads a variable of the process environment.
    public static func getEnvironment(_ name: String) -> String? {
        getenv(name).map { String(cString: $0) }
    }
}
