import Glibc
import NodescopeSocket

/// Which file a path names, whatever its spelling: the device and inode of an existing file, or
/// the resolved directory and the name of a file still to be created.
struct FileIdentity: Hashable, Sendable {
    enum Kind: Hashable, Sendable {
        /// An existing file (links followed).
        case existing(device: UInt64, inode: UInt64)
        /// A file that does not exist yet: its directory with every link resolved, and its name.
        case planned(directory: String, name: String)
    }

    let kind: Kind

    /// The identity of `path` as the file system sees it now.
    static func of(_ path: String) -> FileIdentity {
        var info = stat()
        if stat(path, &info) == 0 {
            return FileIdentity(kind: .existing(device: UInt64(info.st_dev), inode: UInt64(info.st_ino)))
        }
        // A dangling link is written through: the file it names is the one that will be created.
        var target = path
        for _ in 0..<40 {
            guard lstat(target, &info) == 0, info.st_mode & S_IFMT == S_IFLNK, let link = SocketTrust.readLink(target) else { break }
            target = link.hasPrefix("/") ? link : directory(of: target) + "/" + link
        }
        let name = target.split(separator: "/").last.map(String.init) ?? target
        let parent = directory(of: target)
        return FileIdentity(kind: .planned(directory: realPath(parent) ?? parent, name: name))
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
