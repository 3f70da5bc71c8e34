/// Where the collector's socket is, by the protocol's rule (docs/PROTOCOL.md, "Transport"):
/// `NODESCOPE_SOCKET` when set, else `$XDG_RUNTIME_DIR/nodescope/collector.sock`, else
/// `/tmp/nodescope-$UID/collector.sock`.
public enum CollectorSocketPath {
    /// Resolves the path from an environment lookup and the user id.
    public static func resolve(environment: (String) -> String?, uid: UInt32) -> String {
        if let explicit = environment("NODESCOPE_SOCKET"), !explicit.isEmpty { return explicit }
        if let runtime = environment("XDG_RUNTIME_DIR"), !runtime.isEmpty {
            return runtime + "/nodescope/collector.sock"
        }
        return "/tmp/nodescope-\(uid)/collector.sock"
    }
}
