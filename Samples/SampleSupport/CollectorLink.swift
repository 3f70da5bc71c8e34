import NodesDebug

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A sample's link to a Nodescope collector. The agent itself needs no call: the first use of
/// `NodeTracker.shared` starts it as the environment asks (`NODESCOPE_SOCKET`, `NODESCOPE`).
/// A sample only makes sure that the collector sees its whole script.
public enum CollectorLink {
    /// Starts recording the tree, which starts the agent, and gives the agent a moment to
    /// connect when there is a collector to connect to: up to `seconds` when one was named
    /// (`NODESCOPE_SOCKET`), up to 1 s when a debug build finds a socket at the default path.
    ///
    /// The agent's first snapshot holds only what is alive at that moment, so a node detached
    /// and released before the connection is never seen, and a leaked node would hang under
    /// ancestors that the collector never knew.
    public static func start(waitingUpTo seconds: Double = 3) {
        NodeTracker.shared.startRecording()
        guard let agent = NodescopeAgent.current else { return }
        let wait: Double
        switch agent.settings.mode {
        case .explicit: wait = seconds
        case .watchDefault where access(agent.settings.socketPath, F_OK) == 0: wait = min(seconds, 1)
        default: return
        }
        let deadline = MonotonicClock.now() &+ UInt64(wait * 1_000_000_000)
        while !agent.isConnected, MonotonicClock.now() < deadline { usleep(5_000) }
    }

    /// Waits, briefly, until the agent has written every event so far. Only when a collector was
    /// named or is already connected: a sample run alone does not wait.
    public static func flush() {
        guard let agent = NodescopeAgent.current else { return }
        if agent.settings.mode == .explicit || agent.isConnected {
            agent.waitUntilFlushed(timeoutNanoseconds: 3_000_000_000)
        }
    }
}
