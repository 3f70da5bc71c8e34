#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a collector's socket is one that only this user (or root) controls: the rules that
/// hosts, clients and the collector itself apply before they use the socket
/// (docs/PROTOCOL.md, "Permissions and peer check").
///
/// The threat is another local user putting a listener of their own where ours is expected:
/// whoever can rename, delete or re-point anything on the way to the socket can put their own
/// socket there, and a host would stream its whole tree to it. So every directory on the way
/// must belong to this user or root and, unless sticky, be closed to writes by others; the
/// socket's own directory must be closed to writes by others, sticky or not; a symbolic link on
/// the way must belong to this user or root; and the process that accepted the connection must
/// run as this user (`SO_PEERCRED`).
package enum SocketTrust {
    /// `SO_PEERCRED` on Linux (not exported to Swift by Glibc); the daemon reads the peer's
    /// credentials with it too.
    package static let peerCredentialsOption: Int32 = 17

    /// Why a socket is not trusted, in words a person can act on.
    package struct Refusal: Error, Sendable, Equatable, CustomStringConvertible {
        /// What kind of problem it is.
        package enum Code: String, Sendable {
            /// A directory (or the socket) belongs to another user.
            case foreignOwner
            /// Others may write in a directory on the way.
            case writableByOthers
            /// A symbolic link on the way belongs to another user.
            case foreignSymlink
            /// A component on the way is not a directory, or the path names no socket.
            case notADirectory
            /// More symbolic links than a path resolution allows (a loop?).
            case tooManySymlinks
            /// The socket's directory is not open to this user: it belongs to someone else.
            case inaccessible
            /// The process serving the socket runs as another user.
            case foreignPeer
            /// A component, or the peer, could not be inspected.
            case uninspectable
        }

        /// What kind of problem it is.
        package let code: Code
        /// What was found, without advice (each caller adds what to do).
        package let message: String

        /// Creates a refusal.
        package init(_ code: Code, _ message: String) {
            self.code = code
            self.message = message
        }

        /// The message.
        package var description: String { message }
    }

    /// One thing met on the way to the socket, as `lstat` (or `fstat`) saw it.
    package struct Entry: Sendable, Equatable {
        /// What the entry is on the way.
        package enum Kind: Sendable, Equatable {
            /// A directory above the socket's own directory.
            case ancestor
            /// The directory that holds the socket.
            case socketDirectory
            /// A symbolic link that the path goes through.
            case symlink
            /// The socket file itself.
            case socket
        }

        /// The path, as resolved so far.
        package var path: String
        /// What the entry is on the way.
        package var kind: Kind
        /// The owner's uid.
        package var owner: UInt32
        /// The permission bits, with the sticky bit (`st_mode & 0o7777`).
        package var mode: UInt32

        /// Creates an entry.
        package init(path: String, kind: Kind, owner: UInt32, mode: UInt32) {
            self.path = path
            self.kind = kind
            self.owner = owner
            self.mode = mode & 0o7777
        }
    }

    /// The rule for one entry: nil when nobody but `uid` and root can change what it leads to.
    package static func judge(_ entry: Entry, uid: UInt32) -> Refusal? {
        let ownerTrusted = entry.owner == uid || entry.owner == 0
        let othersMayWrite = entry.mode & 0o022 != 0
        let sticky = entry.mode & 0o1000 != 0
        switch entry.kind {
        case .symlink:
            guard ownerTrusted else {
                return Refusal(
                    .foreignSymlink,
                    "\(entry.path) is a symbolic link owned by uid \(entry.owner), who could point it elsewhere")
            }
        case .ancestor:
            guard ownerTrusted else {
                return Refusal(
                    .foreignOwner,
                    "\(entry.path) belongs to uid \(entry.owner) (not to you, uid \(uid), nor to root), who could "
                        + "rename what it holds and put something else in its place")
            }
            if othersMayWrite, !sticky {
                return Refusal(
                    .writableByOthers,
                    "others may write in \(entry.path) (mode \(octal(entry.mode))), so they could replace what it holds")
            }
        case .socketDirectory:
            // The sticky bit is no excuse here: a directory's owner may delete any file in it, and
            // anyone who may write in it can bind a socket there before the collector does.
            guard ownerTrusted else {
                return Refusal(
                    .foreignOwner,
                    "the socket's directory \(entry.path) belongs to uid \(entry.owner) (not to you, uid \(uid), "
                        + "nor to root), who can delete the socket and bind their own")
            }
            if othersMayWrite {
                return Refusal(
                    .writableByOthers,
                    "others may write in the socket's directory \(entry.path) (mode \(octal(entry.mode))), so they "
                        + "could put a socket of their own there")
            }
        case .socket:
            guard ownerTrusted else {
                return Refusal(.foreignOwner, "the socket \(entry.path) belongs to uid \(entry.owner), not to you (uid \(uid))")
            }
        }
        return nil
    }

    /// What the way to a socket path looks like.
    package enum Inspection: Sendable, Equatable {
        /// Every entry on the way is trusted and the socket file exists in `directory` (resolved).
        case present(directory: String)
        /// Every directory on the way is trusted; there is no socket file in `directory` yet.
        case absent(directory: String)
        /// `existing` (resolved, trusted) is the deepest directory that exists; `missing` are the
        /// names still to create below it, the socket's own name last.
        case missingDirectory(existing: String, missing: [String])
        /// Something on the way is not trusted.
        case refused(Refusal)
    }

    /// Walks `socketPath` from `/`, following symbolic links, and judges every entry on the way.
    package static func inspect(_ socketPath: String, uid: UInt32 = currentUID) -> Inspection {
        var pending = Array(components(of: absolute(socketPath)).reversed())
        var names: [String] = []
        var directories: [Entry] = []
        var links = 0
        switch entry(at: "/", kind: .ancestor) {
        case .success(let root):
            if let refusal = judge(root, uid: uid) { return .refused(refusal) }
            directories.append(root)
        case .failure(let refusal):
            return .refused(refusal)
        }
        while let name = pending.popLast() {
            if name == "." { continue }
            if name == ".." {
                if !names.isEmpty {
                    names.removeLast()
                    directories.removeLast()
                }
                continue
            }
            let current = path(of: names)
            let candidate = path(of: names + [name])
            let isLeaf = pending.allSatisfy { $0 == "." }
            var info = stat()
            if lstat(candidate, &info) != 0 {
                let error = errno
                switch error {
                case ENOENT where isLeaf:
                    var directory = directories[directories.count - 1]
                    directory.kind = .socketDirectory
                    if let refusal = judge(directory, uid: uid) { return .refused(refusal) }
                    return .absent(directory: current)
                case ENOENT:
                    return .missingDirectory(existing: current, missing: [name] + pending.reversed().filter { $0 != "." })
                case EACCES:
                    return .refused(
                        Refusal(
                            .inaccessible,
                            isLeaf
                                ? "the socket \(socketPath) belongs to another user: its directory \(current) is not open "
                                    + "to you (uid \(uid))"
                                : "\(current) belongs to another user: it is not open to you (uid \(uid))"))
                case ENOTDIR:
                    return .refused(Refusal(.notADirectory, "\(current) is not a directory"))
                default:
                    return .refused(Refusal(.uninspectable, "cannot inspect \(candidate): \(SystemErrorText.describe(error))"))
                }
            }
            let type = info.st_mode & S_IFMT
            if type == S_IFLNK {
                let link = Entry(path: candidate, kind: .symlink, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode))
                if let refusal = judge(link, uid: uid) { return .refused(refusal) }
                links += 1
                guard links <= 40, let target = readLink(candidate) else {
                    return .refused(Refusal(.tooManySymlinks, "cannot resolve \(candidate): too many symbolic links"))
                }
                if target.hasPrefix("/") {
                    names.removeAll()
                    directories.removeSubrange(1...)
                }
                pending += components(of: target).reversed()
                continue
            }
            if isLeaf {
                var directory = directories[directories.count - 1]
                directory.kind = .socketDirectory
                if let refusal = judge(directory, uid: uid) { return .refused(refusal) }
                let socket = Entry(path: candidate, kind: .socket, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode))
                if let refusal = judge(socket, uid: uid) { return .refused(refusal) }
                return .present(directory: current)
            }
            guard type == S_IFDIR else {
                return .refused(Refusal(.notADirectory, "\(candidate) is not a directory"))
            }
            let directory = Entry(path: candidate, kind: .ancestor, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode))
            if let refusal = judge(directory, uid: uid) { return .refused(refusal) }
            names.append(name)
            directories.append(directory)
        }
        return .refused(Refusal(.notADirectory, "\(socketPath) names a directory, not a socket"))
    }

    /// The uid of the process at the other end of a connected Unix socket (`SO_PEERCRED`).
    package static func peerUID(of descriptor: Int32) -> UInt32? {
        #if os(Linux)
        // struct ucred { pid_t pid; uid_t uid; gid_t gid; }, which Swift's Glibc does not import.
        var credentials = [UInt32](repeating: 0, count: 3)
        var length = socklen_t(12)
        let result = credentials.withUnsafeMutableBytes {
            getsockopt(descriptor, SOL_SOCKET, Self.peerCredentialsOption, $0.baseAddress, &length)
        }
        guard result == 0, length == 12 else { return nil }
        return credentials[1]
        #else
        var uid = uid_t()
        var gid = gid_t()
        guard getpeereid(descriptor, &uid, &gid) == 0 else { return nil }
        return UInt32(uid)
        #endif
    }

    /// The rule for the peer: the collector must run as `uid` itself.
    package static func checkPeer(of descriptor: Int32, socketPath: String, uid: UInt32 = currentUID) -> Refusal? {
        guard let peer = peerUID(of: descriptor) else {
            return Refusal(
                .uninspectable, "cannot tell which user serves \(socketPath) (SO_PEERCRED failed: \(SystemErrorText.describe(errno)))")
        }
        guard peer == uid else {
            return Refusal(.foreignPeer, "the collector on \(socketPath) runs as uid \(peer), not as you (uid \(uid))")
        }
        return nil
    }

    /// Why ``connect(to:uid:)`` gave no connection.
    package enum ConnectFailure: Error, Sendable, Equatable {
        /// The path does not fit in `sockaddr_un`.
        case pathTooLong
        /// A system call failed with `errno` (`connect` with `ENOENT` when there is no socket).
        case system(call: String, errno: Int32)
        /// The socket's place or its peer is not trusted: nothing was sent.
        case untrusted(Refusal)
    }

    /// Checks the way to `path`, connects (non-blocking, close-on-exec) and checks the peer.
    /// Returns the connected descriptor, on which nothing has been sent yet.
    package static func connect(to path: String, uid: UInt32 = currentUID) -> Result<Int32, ConnectFailure> {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { return .failure(.pathTooLong) }
        switch inspect(path, uid: uid) {
        case .refused(let refusal): return .failure(.untrusted(refusal))
        case .absent, .missingDirectory: return .failure(.system(call: "connect", errno: ENOENT))
        case .present: break
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
        #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        #else
        let type = SOCK_STREAM
        #endif
        let descriptor = socket(AF_UNIX, type, 0)
        guard descriptor >= 0 else { return .failure(.system(call: "socket", errno: errno)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                systemConnect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            close(descriptor)
            return .failure(.system(call: "connect", errno: error))
        }
        // The place was checked by path; the peer is who actually answered.
        if let refusal = checkPeer(of: descriptor, socketPath: path, uid: uid) {
            close(descriptor)
            return .failure(.untrusted(refusal))
        }
        return .success(descriptor)
    }

    /// This process's real uid.
    package static var currentUID: UInt32 { UInt32(getuid()) }

    // MARK: Helpers

    private static func systemConnect(_ descriptor: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t) -> Int32 {
        #if canImport(Glibc)
        Glibc.connect(descriptor, address, length)
        #else
        Darwin.connect(descriptor, address, length)
        #endif
    }

    private static func entry(at path: String, kind: Entry.Kind) -> Result<Entry, Refusal> {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            return .failure(Refusal(.uninspectable, "cannot inspect \(path): \(SystemErrorText.describe(errno))"))
        }
        return .success(Entry(path: path, kind: kind, owner: UInt32(info.st_uid), mode: UInt32(info.st_mode)))
    }

    private static func components(of path: String) -> [String] {
        path.split(separator: "/").map(String.init)
    }

    private static func path(of names: [String]) -> String {
        "/" + names.joined(separator: "/")
    }

    private static func absolute(_ path: String) -> String {
        guard !path.hasPrefix("/") else { return path }
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return "/" + path }
        return string(fromNULTerminated: buffer) + "/" + path
    }

    /// The target of the symbolic link at `path` (as written in the link), or nil when `path` is
    /// not a readable link.
    package static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        buffer[count] = 0
        return string(fromNULTerminated: buffer)
    }

    /// The UTF-8 text of a C string that a system call wrote into `buffer`, up to its NUL.
    private static func string(fromNULTerminated buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private static func octal(_ mode: UInt32) -> String {
        String(mode & 0o7777, radix: 8)
    }
}
