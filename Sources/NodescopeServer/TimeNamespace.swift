import Glibc
import NodescopeCollector

/// Whether a peer process reads the same `CLOCK_MONOTONIC` as this one: processes in one Linux
/// time namespace do; a process in another (a container with its own) may not.
enum TimeNamespace {
    /// Compares `/proc/self/ns/time` with the peer's. A kernel without time namespaces has one
    /// clock for all; a peer whose namespace cannot be read (gone, not ours to read) is unknown.
    static func relation(toPeer pid: Int32?) -> ClockRelation {
        guard let ours = link("/proc/self/ns/time") else {
            return errno == ENOENT ? .same : .unknown
        }
        guard let pid, pid > 0, let theirs = link("/proc/\(pid)/ns/time") else { return .unknown }
        return ours == theirs ? .same : .different
    }

    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: 128)
        let count = buffer.withUnsafeMutableBufferPointer { readlink(path, $0.baseAddress!, $0.count - 1) }
        guard count > 0 else { return nil }
        return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
