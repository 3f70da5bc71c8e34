import Foundation

/// The directory that reports give source paths relative to: SARIF's `%SRCROOT%`, so that code
/// scanning (GitHub, GitLab) finds the files of the repository it scanned.
enum SourceRoot {
    /// `given` (made absolute) when set; else the work tree of the git repository around the
    /// working directory (the nearest directory upwards with a `.git` entry); else the working
    /// directory. Hosts send `#filePath`, which the compiler writes as an absolute path of the
    /// checkout it built, so the root of that checkout is what makes them relative.
    static func resolve(_ given: String?) -> String {
        let fileManager = FileManager.default
        let current = fileManager.currentDirectoryPath
        if let given, !given.isEmpty {
            let absolute = given.hasPrefix("/") ? given : (current as NSString).appendingPathComponent(given)
            return (absolute as NSString).standardizingPath
        }
        var directory = URL(fileURLWithPath: current).standardizedFileURL.path
        while true {
            if fileManager.fileExists(atPath: (directory as NSString).appendingPathComponent(".git")) { return directory }
            let parent = (directory as NSString).deletingLastPathComponent
            if parent == directory || parent.isEmpty { return current }
            directory = parent
        }
    }
}
