import NodesRetainers
import NodesTracking
import NodescopeWire

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

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
    /// How long a normal exit may wait for the queued events to be written, in nanoseconds
    /// (`NODESCOPE_EXIT_FLUSH`, in seconds). Nil for the defaults: 1 s, or 10 s when the
    /// collector asked for the exit hold (as `nodescope check` does).
    public var exitFlushNanos: UInt64?
    /// How long the retainer analysis may take per leaked object it explains, in nanoseconds
    /// (`NODESCOPE_RETAINER_MS`, in milliseconds). Nil for the default, 50 ms: enough for a
    /// host of about 20,000 nodes; a larger heap takes longer to copy and search.
    public var retainerNanosPerObject: UInt64?

    /// The exit flush bound without the exit hold, when the environment does not set one.
    public static let defaultExitFlushNanos: UInt64 = 1_000_000_000
    /// The exit flush bound with the exit hold (a collector that judges the exit waits for it).
    public static let defaultHeldExitFlushNanos: UInt64 = 10_000_000_000

    /// Creates settings.
    public init(mode: Mode, socketPath: String, exitFlushNanos: UInt64? = nil, retainerNanosPerObject: UInt64? = nil) {
        self.mode = mode
        self.socketPath = socketPath
        self.exitFlushNanos = exitFlushNanos
        self.retainerNanosPerObject = retainerNanosPerObject
    }

    /// The bounds of the retainer analysis: ``retainerNanosPerObject`` per object (50 ms by
    /// default), and per call that or 1 s, whichever is longer.
    package var retainerLimits: RetainerAnalysis.Limits {
        var limits = RetainerAnalysis.Limits()
        if let retainerNanosPerObject {
            limits.timePerObjectNanos = retainerNanosPerObject
            limits.timePerBatchNanos = max(limits.timePerBatchNanos, retainerNanosPerObject)
        }
        return limits
    }

    /// Parses `NODESCOPE_RETAINER_MS`: milliseconds, a whole number from 1 to 600,000. Nil otherwise.
    static func parseRetainerMilliseconds(_ text: String?) -> UInt64? {
        guard let text, let milliseconds = UInt64(text), milliseconds >= 1, milliseconds <= 600_000 else { return nil }
        return milliseconds * 1_000_000
    }

    /// The exit flush bound in force, given whether the collector asked for the exit hold.
    public func exitFlushBound(holdExit: Bool) -> UInt64 {
        exitFlushNanos ?? (holdExit ? Self.defaultHeldExitFlushNanos : Self.defaultExitFlushNanos)
    }

    /// Parses `NODESCOPE_EXIT_FLUSH`: seconds, a decimal number from 0 to 3600. Nil otherwise.
    static func parseExitFlush(_ text: String?) -> UInt64? {
        guard let text, let seconds = Double(text), seconds.isFinite, seconds >= 0, seconds <= 3_600 else { return nil }
        return UInt64(seconds * 1e9)
    }

    /// The settings the environment asks for: `NODESCOPE=off` disables; `NODESCOPE_SOCKET`
    /// names the socket; otherwise debug builds watch ``defaultSocketPath(environment:)`` and
    /// release builds stay off.
    public static func fromEnvironment(_ environment: (String) -> String? = Self.getEnvironment) -> AgentSettings {
        var settings = modeAndPath(environment)
        settings.exitFlushNanos = parseExitFlush(environment("NODESCOPE_EXIT_FLUSH"))
        settings.retainerNanosPerObject = parseRetainerMilliseconds(environment("NODESCOPE_RETAINER_MS"))
        return settings
    }

    private static func modeAndPath(_ environment: (String) -> String?) -> AgentSettings {
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
