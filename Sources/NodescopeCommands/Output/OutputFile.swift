import Foundation
import Glibc
import NodescopeSocket

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

    /// Writes `text` to `path`, or to standard output for `-` (``OutputWriter``): a regular
    /// file is written to a temporary name in its directory and renamed over `path`, so a
    /// reader never sees half of it and a failure leaves the old file as it was; a device or a
    /// pipe is written where it is. Any failed write is an error naming the file and the reason.
    static func write(_ text: String, to path: String) throws(CLIError) {
        let writer = try OutputWriter(path: path)
        writer.write(text)
        try writer.finish()
    }

    /// The directory a path's file is in: `.` for a bare name.
    static func directory(of path: String) -> String {
        let parent = (path as NSString).deletingLastPathComponent
        return parent.isEmpty ? "." : parent
    }
}

/// A file that a command reads (`--from`, `check --baseline`): checked before it is read, so that
/// a device, a pipe or a directory is refused at once (a FIFO is opened without waiting for a
/// writer), and so is a file larger than the bound for what it should hold.
enum InputFile {
    /// The largest input of each kind, in bytes (documented in README.md).
    enum Bound {
        /// A recording (`--from FILE.nsrec`): read whole, then replayed; 2 GiB is some 60
        /// million recorded events.
        static let recording = 2 << 30
        /// A tree in JSON (`export|diff --from FILE.json`): 1 GiB is some 2 million nodes.
        static let treeJSON = 1 << 30
        /// A baseline (`check --baseline`): 16 MiB is some 100,000 entries.
        static let baseline = 16 << 20
    }

    /// Every byte of `path`, which must be a regular file of at most `bound` bytes; anything
    /// else is an error that says what the file is and what was expected (`what`: `a recording`).
    static func read(_ path: String, bound: Int, what: String) throws(CLIError) -> [UInt8] {
        let (descriptor, size) = try open(path, bound: bound, what: what)
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size + 1)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw CLIError("cannot read \(path): \(SystemErrorText.describe(errno))")
            }
            // A file that grows while it is read is held to the same bound.
            guard bytes.count + count <= bound else { throw tooLarge(path, size: bytes.count + count, bound: bound, what: what) }
            bytes.append(contentsOf: chunk[..<count])
        }
    }

    /// Opens `path` for reading after checking it: a regular file of at most `bound` bytes.
    /// Returns the descriptor (the caller closes it) and the file's size.
    static func open(_ path: String, bound: Int, what: String) throws(CLIError) -> (descriptor: Int32, size: Int) {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        let descriptor = Glibc.open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard descriptor >= 0 else {
            let reason = errno == ENOENT ? "no such file" : SystemErrorText.describe(errno)
            throw CLIError("cannot read \(path): \(reason)")
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            let reason = SystemErrorText.describe(errno)
            close(descriptor)
            throw CLIError("cannot read \(path): \(reason)")
        }
        let kind = info.st_mode & S_IFMT
        guard kind == S_IFREG else {
            close(descriptor)
            let noun: String
            switch kind {
            case S_IFDIR: noun = "a directory"
            case S_IFCHR: noun = "a character device"
            case S_IFBLK: noun = "a block device"
            case S_IFIFO: noun = "a FIFO (named pipe)"
            case S_IFSOCK: noun = "a socket"
            default: noun = "not a regular file"
            }
            throw CLIError("cannot read \(path): it is \(noun), not a regular file (\(what) is read from a file)")
        }
        let size = Int(info.st_size)
        guard size <= bound else {
            close(descriptor)
            throw tooLarge(path, size: size, bound: bound, what: what)
        }
        // Reads block as usual from here on (a regular file never waits anyway).
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
        return (descriptor, size)
    }

    private static func tooLarge(_ path: String, size: Int, bound: Int, what: String) -> CLIError {
        CLIError("cannot read \(path): it is \(ByteCount.text(size)), more than \(what) may be (\(ByteCount.text(bound)))")
    }
}

/// Byte counts for people: `16 MiB`, `3.2 GiB`, `512 bytes`.
enum ByteCount {
    static func text(_ bytes: Int) -> String {
        let units: [(Int, String)] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")]
        for (size, unit) in units where bytes >= size {
            let value = Double(bytes) / Double(size)
            return (value == value.rounded() ? "\(Int(value))" : String(format: "%.1f", value)) + " " + unit
        }
        return "\(bytes) bytes"
    }
}
