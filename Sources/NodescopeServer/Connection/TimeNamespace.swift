import Glibc
import NodescopeCollector
import NodescopeSocket

/// Whether a peer process reads the same `CLOCK_MONOTONIC` as this one: processes in one Linux
/// time namespace do; a process in another (a container with its own) may not.
enum TimeNamespace {
    /// Compares `/proc/self/ns/time` with the peer's. A kernel without time namespaces has one
    /// clock for all; a peer whose namespace cannot be read (gone, not ours to read) is unknown.
    static func relation(toPeer pid: Int32?) -> ClockRelation {
        guard let ours = SocketTrust.readLink("/proc/self/ns/time") else {
            return errno == ENOENT ? .same : .unknown
        }
        guard let pid, pid > 0, let theirs = SocketTrust.readLink("/proc/\(pid)/ns/time") else { return .unknown }
        return ours == theirs ? .same : .different
    }
}
