import Foundation
import Glibc
import NodesDebug

/// A file that a command writes (`export -o`, `demo -o`, `check`'s reports): checked before the
/// command does its work, so that a mistyped path fails at once instead of after a long run,
/// and written whole or not at all.
enum OutputFile {
    /// Why `path` cannot be written, in words a person can act on; nil when it can be (as far
    /// as can be told before writing). `-` (standard output) always can.
    static func problem(with path: String) -> String? {
        if path == "-" { return nil }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            if isDirectory.boolValue { return "is a directory; name a file in it" }
            return access(path, W_OK) == 0 ? nil : "the file is not writable"
        }
        return parentProblem(of: path)
    }

    /// Why a directory of outputs (`check --svg-dir`) cannot be used, or nil when it can: an
    /// existing writable directory, or a new one in a writable directory.
    static func directoryProblem(_ path: String) -> String? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { return "exists and is not a directory" }
            return access(path, W_OK | X_OK) == 0 ? nil : "the directory is not writable"
        }
        return parentProblem(of: path)
    }

    /// Why nothing can be created at `path`: its directory is missing or not writable.
    private static func parentProblem(of path: String) -> String? {
        let directory = directory(of: path)
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            return "the directory \(directory) does not exist"
        }
        return access(directory, W_OK | X_OK) == 0 ? nil : "the directory \(directory) is not writable"
    }

    /// Writes `text` to `path`, or to standard output for `-`. A file is written to a temporary
    /// name in its directory and renamed over `path`, so a reader never sees half of it and a
    /// failure leaves the old file as it was.
    static func write(_ text: String, to path: String) throws(CLIError) {
        if path == "-" {
            Terminal.write(text)
            return
        }
        if let problem = problem(with: path) { throw CLIError("cannot write \(path): \(problem)") }
        let directory = directory(of: path)
        let name = path.split(separator: "/").last.map(String.init) ?? path
        var template = Array("\(directory)/.\(name).XXXXXX".utf8CString)
        let descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw CLIError("cannot write \(path): \(String(cString: strerror(errno)))") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        func fail(_ what: String) -> CLIError {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            unlink(temporary)
            return CLIError("cannot write \(path): \(what): \(reason)")
        }
        // mkstemp makes the file 0600; a written report or diagram is as readable as any new file.
        let mask = umask(0)
        umask(mask)
        guard fchmod(descriptor, 0o666 & ~mask) == 0 else { throw fail("setting its mode") }
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw fail("writing")
            }
            bytes = bytes.dropFirst(written)
        }
        guard close(descriptor) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError("cannot write \(path): \(reason)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError("cannot write \(path): \(reason)")
        }
    }

    /// The directory a path's file is in: `.` for a bare name.
    static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

/// A file that a command reads (`export --from`), with reasons a person can act on.
enum InputFile {
    /// Every byte of `path`; a directory, a missing or unreadable file is an error that says so.
    static func read(_ path: String) throws(CLIError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            let reason = errno == ENOENT ? "no such file" : SystemErrorText.describe(errno)
            throw CLIError("cannot read \(path): \(reason)")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read \(path): \(SystemErrorText.describe(errno))")
            }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
