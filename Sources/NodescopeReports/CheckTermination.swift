/// How the command that `nodescope check` ran came to an end.
package enum CheckTermination: Equatable, Sendable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal killed it.
    case signaled(Int32)

    /// Whether it exited with status 0.
    package var succeeded: Bool { self == .exited(0) }

    /// The exit code `check` passes on for it: its own status, or 128 + the signal number, as a shell does.
    package var passedOnCode: Int32 {
        switch self {
        case .exited(let status): status
        case .signaled(let signal): 128 + signal
        }
    }

    /// `exit 3`, `killed by SIGTERM (signal 15)`.
    package var phrase: String {
        switch self {
        case .exited(let status): "exit \(status)"
        case .signaled(let signal): "killed by \(Self.name(of: signal)) (signal \(signal))"
        }
    }

    /// Decodes a `waitpid` status (the `WIFEXITED`/`WTERMSIG` macros are not visible from Swift).
    package init(waitStatus status: Int32) {
        let signal = status & 0x7f
        if signal == 0 {
            self = .exited((status >> 8) & 0xff)
        } else {
            self = .signaled(signal)
        }
    }

    /// The conventional name of a signal, such as `SIGTERM`; `signal N` for the unusual ones.
    package static func name(of signal: Int32) -> String {
        let names: [Int32: String] = [
            1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
            9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM",
            24: "SIGXCPU", 25: "SIGXFSZ",
        ]
        return names[signal] ?? "signal \(signal)"
    }
}
