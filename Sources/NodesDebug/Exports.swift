import NodesAgent
@_exported import NodesTracking
import NodescopeSocket

// NodesDebug is the umbrella an app imports: the tracking API (NodesTracking) re-exported, the
// shared tracker, which starts the agent (NodeTracker+Shared.swift), and the agent's app-facing
// handle. The agent's parts (its link, writer and encoders), the retainer analysis and the socket
// rules stay out of an app's sight: their modules are imported here, not re-exported.

/// The agent that streams the shared tracker's tree to a Nodescope collector (see the README's
/// "The agent"): ``NodescopeAgent/start(socketPath:)`` starts it, ``NodescopeAgent/current`` is
/// the running one.
public typealias NodescopeAgent = NodesAgent.NodescopeAgent

/// The agent's settings, from the environment (`NODESCOPE_SOCKET`, `NODESCOPE`) or given.
public typealias AgentSettings = NodesAgent.AgentSettings

/// Diagnostics written to standard error without Foundation and without SIGPIPE (the runtime's
/// leak handler uses it).
public typealias StandardError = NodescopeSocket.StandardError
