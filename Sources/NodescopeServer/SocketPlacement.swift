import Glibc
import NodescopeCollector
import NodescopeSocket

/// Prepares the place of the collector's socket: a private directory (ours, closed to others)
/// reached only through directories and links that nobody else can change (``SocketTrust``), no
/// other collector answering there, and no stale socket file left behind by a dead one.
enum SocketPlacement {
    /// What to do about a refused place, appended to every refusal.
    static let advice =
        "put the socket in a directory of yours that only you may write (it is created 0700 when "
        + "missing), e.g. --socket ~/.nodescope/collector.sock"

    /// Checks the way to `path`, creates its missing directories safely, and checks that nobody
    /// serves on `path`.
    static func prepare(_ path: String) throws(ServerError) {
        try checkNamesAFile(path)
        guard path.utf8.count < 108 else {
            throw ServerError(.pathTooLong, "the socket path \(path) is longer than 107 bytes; choose a shorter --socket")
        }
        let uid = SocketTrust.currentUID
        var inspection = SocketTrust.inspect(path, uid: uid)
        if case .missingDirectory(let existing, let missing) = inspection {
            try createDirectories(missing.dropLast(), below: existing, uid: uid)
            inspection = SocketTrust.inspect(path, uid: uid)
        }
        switch inspection {
        case .refused(let refusal):
            throw ServerError(.unsafeDirectory, "will not listen on \(path): \(refusal.message); \(advice)")
        case .missingDirectory:
            throw ServerError(.unsafeDirectory, "the directories of \(path) could not be created; \(advice)")
        case .absent:
            return
        case .present:
            break
        }
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard (info.st_mode & S_IFMT) == S_IFSOCK else {
            throw ServerError(.notASocket, "\(path) exists and is not a socket; remove it or choose another --socket")
        }
        if isAnswering(path) {
            throw ServerError(
                .alreadyRunning,
                "a collector is already running on \(path); use it (nodescope ps) or stop it first")
        }
        unlink(path)  // stale: left by a collector that did not clean up
    }

    /// Refuses a path that names no file: an empty one, or one with a NUL byte. Bound as is,
    /// either would give an abstract socket (Linux autobinds an empty address; a leading NUL
    /// names the abstract namespace), which no file permission guards.
    static func checkNamesAFile(_ path: String) throws(ServerError) {
        guard !path.isEmpty else {
            throw ServerError(.invalidPath, "the socket path is empty; name a file, e.g. --socket ~/.nodescope/collector.sock")
        }
        guard !path.utf8.contains(0) else {
            throw ServerError(
                .invalidPath, "the socket path \(VisibleText.escaped(path)) holds a NUL byte; name a file without one")
        }
    }

    /// Restricts the bound socket to its owner.
    static func restrict(_ path: String) {
        chmod(path, 0o600)
    }

    /// Creates `names` one below the other under `parent` (already judged by path), each with
    /// `mkdirat` relative to the opened directory above it, never following a link, and judges
    /// every directory by what was actually opened (`fstat`). The last one is private (0700).
    private static func createDirectories(_ names: ArraySlice<String>, below parent: String, uid: UInt32) throws(ServerError) {
        var directory = open(parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard directory >= 0 else {
            throw ServerError(.unsafeDirectory, "cannot open \(parent): \(SystemErrorText.describe(errno)); \(advice)")
        }
        defer { close(directory) }
        try judgeOpened(directory, path: parent, kind: .ancestor, uid: uid)
        var path = parent
        for (index, name) in names.enumerated() {
            let isLast = index == names.count - 1
            path += (path.hasSuffix("/") ? "" : "/") + name
            if name != ".", name != "..", mkdirat(directory, name, isLast ? 0o700 : 0o755) != 0, errno != EEXIST {
                throw ServerError(.unsafeDirectory, "cannot create \(path): \(SystemErrorText.describe(errno)); \(advice)")
            }
            let next = openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard next >= 0 else {
                throw ServerError(.unsafeDirectory, "cannot open \(path) (\(SystemErrorText.describe(errno))): was it replaced? \(advice)")
            }
            close(directory)
            directory = next
            try judgeOpened(directory, path: path, kind: isLast ? .socketDirectory : .ancestor, uid: uid)
        }
    }

    private static func judgeOpened(
        _ descriptor: Int32, path: String, kind: SocketTrust.Entry.Kind, uid: UInt32
    ) throws(ServerError) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            throw ServerError(.unsafeDirectory, "cannot inspect \(path): \(SystemErrorText.describe(errno))")
        }
        let entry = SocketTrust.Entry(path: path, kind: kind, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode))
        if let refusal = SocketTrust.judge(entry, uid: uid) {
            throw ServerError(.unsafeDirectory, "will not listen in \(path): \(refusal.message); \(advice)")
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
