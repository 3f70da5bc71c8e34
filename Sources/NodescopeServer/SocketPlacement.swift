import Glibc

/// Prepares the place of the collector's socket: a private directory (0700, ours), no other
/// collector answering there, and no stale socket file left behind by a dead one.
enum SocketPlacement {
    /// Makes the directory of `path` private and checks that nobody serves on `path`.
    static func prepare(_ path: String) throws(ServerError) {
        guard path.utf8.count < 108 else {
            throw ServerError(.pathTooLong, "the socket path \(path) is longer than 107 bytes; choose a shorter --socket")
        }
        let directory = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        if !directory.isEmpty { try makePrivateDirectory(directory) }

        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw ServerError(.unsafeDirectory, "\(path) exists and is not a socket; remove it or choose another --socket")
        }
        if isAnswering(path) {
            throw ServerError(
                .alreadyRunning,
                "a collector is already running on \(path); use it (nodescope ps) or stop it first")
        }
        unlink(path)  // stale: left by a collector that did not clean up
    }

    /// Restricts the bound socket to its owner.
    static func restrict(_ path: String) {
        chmod(path, 0o600)
    }

    /// Creates the missing directories of `directory` (the last one private, 0700), and checks an
    /// existing one without changing it: nobody else may be able to replace the socket in it.
    private static func makePrivateDirectory(_ directory: String) throws(ServerError) {
        var partial = directory.hasPrefix("/") ? "" : "."
        let components = directory.split(separator: "/")
        for (index, component) in components.enumerated() {
            partial += "/" + component
            var info = stat()
            if stat(partial, &info) != 0 {
                // Only the last component is ours to create private; parents get the usual mode.
                let mode: mode_t = index == components.count - 1 ? 0o700 : 0o755
                if mkdir(partial, mode) != 0, errno != EEXIST {
                    throw ServerError(.unsafeDirectory, "cannot create \(partial): errno \(errno)")
                }
            }
        }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw ServerError(.unsafeDirectory, "\(directory) is not a directory")
        }
        let sticky = info.st_mode & S_ISVTX != 0
        let othersMayWrite = info.st_mode & 0o022 != 0
        if info.st_uid != getuid(), !sticky {
            throw ServerError(
                .unsafeDirectory,
                "\(directory) belongs to uid \(info.st_uid), not to you (uid \(getuid())); put the socket in a "
                    + "directory of yours, e.g. --socket ~/.nodescope/collector.sock")
        }
        if othersMayWrite, !sticky {
            throw ServerError(
                .unsafeDirectory,
                "others may write in \(directory), so they could replace the socket; use a private directory "
                    + "(it is created 0700 when missing), e.g. --socket \(directory)/nodescope/collector.sock")
        }
    }

    /// Whether something accepts connections on `path`.
    static func isAnswering(_ path: String) -> Bool {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            let bytes = Array(path.utf8.prefix(raw.count - 1))
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        return result == 0
    }
}
