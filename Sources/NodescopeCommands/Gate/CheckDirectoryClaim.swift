import Foundation
import Glibc
import NodescopeServer

/// Who owns a `check` run's private socket directory (`nodescope-check-XXXXXX`): the run holds
/// an exclusive `flock` on the directory for its whole life, and the kernel lets go of it when
/// the run ends, however it ends. A directory that nobody holds is stale (its run and its guard
/// were both killed before they could remove it), and the next run removes it.
enum CheckDirectoryClaim {
    /// The prefix of every run's directory name.
    static let prefix = "nodescope-check-"
    /// How old an unclaimed directory must be before it is removed: a run claims its directory
    /// right after creating it, and this keeps that moment out of reach.
    static let minimumAgeSeconds = 60

    /// Claims `directory` for this process, until it exits (the descriptor closes on exec, so no
    /// child holds the claim).
    static func claim(_ directory: String) {
        let descriptor = open(directory, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        // Kept open on purpose: the claim lasts as long as the process.
        _ = flock(descriptor, LOCK_EX | LOCK_NB)
    }

    /// Removes the stale run directories under `base`: ours (owner and mode 0700), unclaimed,
    /// older than ``minimumAgeSeconds``, holding nothing but the run's socket, and no collector
    /// answering on it. Returns the paths removed.
    @discardableResult
    static func removeStale(under base: String) -> [String] {
        let uid = getuid()
        var removed: [String] = []
        for name in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] where name.hasPrefix(prefix) {
            let path = base + "/" + name
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == uid,
                info.st_mode & 0o777 == 0o700, time(nil) - info.st_mtim.tv_sec >= minimumAgeSeconds
            else { continue }
            let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            guard flock(descriptor, LOCK_EX | LOCK_NB) == 0 else { continue }
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? ["?"]
            guard entries.allSatisfy({ $0 == CheckCollector.socketName }) else { continue }
            // A run of a version that took no claim may still serve there.
            guard !CollectorServer.isAnswering(at: path + "/" + CheckCollector.socketName) else { continue }
            for entry in entries { unlinkat(descriptor, entry, 0) }
            if rmdir(path) == 0 { removed.append(path) }
        }
        return removed
    }
}
