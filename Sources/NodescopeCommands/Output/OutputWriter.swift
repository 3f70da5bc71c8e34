import Foundation
import Glibc
import NodescopeSocket

/// Where a command's output goes while it is being made, in chunks of 64 KiB: standard output
/// (`-`), a descriptor the process has (`/dev/stdout`, `/dev/fd/3`: shared, with its offset), a
/// device or one's own pipe named by its path (written where it is), or a regular file, written
/// to a temporary file beside it and renamed over it by ``finish()``, so that a failed or
/// interrupted write leaves no half-written file where the file was asked for. A symbolic link
/// is replaced, never followed.
///
/// A failed write is remembered and the rest is dropped; ``finish()`` reports it, naming the
/// file and the reason. A writer dropped without ``finish()`` removes its temporary file.
final class OutputWriter {
    private enum Target {
        case standardOutput
        case inPlace
        case replacing(temporary: String, final: String)
    }

    /// The file as the user named it (`standard output` for `-`), for messages.
    let name: String
    private let target: Target
    private var descriptor: Int32
    private var buffer: [UInt8] = []
    private var failure: String?
    private static let chunk = 1 << 16

    /// Opens the output at `path` (`-` for standard output).
    ///
    /// - Throws: ``CLIError`` naming the file when it cannot be written (a directory, a missing
    ///   or unwritable directory, a device that cannot be opened).
    init(path: String) throws(CLIError) {
        buffer.reserveCapacity(Self.chunk + 4_096)
        if path == "-" {
            name = "standard output"
            target = .standardOutput
            descriptor = 1
            return
        }
        name = path
        if let inherited = Self.inheritedDescriptor(path) {
            // `/dev/stdout`, `/dev/fd/3`: the descriptor this process already holds, shared (its
            // offset and append mode too, so `-o /dev/stdout >> log` appends), never renamed.
            descriptor = fcntl(inherited, F_DUPFD_CLOEXEC, 3)
            guard descriptor >= 0 else { throw CLIError("cannot write \(path): \(SystemErrorText.describe(errno))") }
            target = .inPlace
            return
        }
        var info = stat()
        // A symbolic link is not followed: it is replaced by the file, as `mv` would replace it
        // (so a link planted in a shared directory can never redirect the output elsewhere).
        let finalPath = path
        if lstat(path, &info) == 0, info.st_mode & S_IFMT != S_IFREG, info.st_mode & S_IFMT != S_IFLNK {
            if info.st_mode & S_IFMT == S_IFDIR { throw CLIError("cannot write \(path): it is a directory; name a file in it") }
            // A device, a pipe or a socket is written where it is: there is nothing to rename.
            // A pipe or socket of another user's is refused (it could be a trap laid in /tmp).
            if info.st_mode & S_IFMT != S_IFCHR, info.st_uid != getuid() {
                throw CLIError("cannot write \(path): it is another user's \(Self.kind(info.st_mode)); name a file of your own")
            }
            // Opened without waiting: a FIFO that nobody reads is an error at once, not a hang.
            descriptor = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else {
                let reason = errno == ENXIO ? "nothing reads that pipe" : SystemErrorText.describe(errno)
                throw CLIError("cannot write \(path): \(reason)")
            }
            _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) & ~O_NONBLOCK)
            target = .inPlace
            return
        }
        if let problem = OutputFile.problem(with: finalPath) { throw CLIError("cannot write \(path): \(problem)") }
        let directory = OutputFile.directory(of: finalPath)
        let base = finalPath.split(separator: "/").last.map(String.init) ?? finalPath
        var template = Array("\(directory)/.\(base).XXXXXX".utf8CString)
        descriptor = mkstemp(&template)
        guard descriptor >= 0 else { throw CLIError("cannot write \(path): \(SystemErrorText.describe(errno))") }
        let temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        target = .replacing(temporary: temporary, final: finalPath)
        // mkstemp makes the file 0600; a written report or diagram is as readable as any new file.
        let mask = umask(0)
        umask(mask)
        if fchmod(descriptor, 0o666 & ~mask) != 0 { failure = "setting its mode: \(SystemErrorText.describe(errno))" }
    }

    deinit {
        guard descriptor >= 0 else { return }
        if case .standardOutput = target { return }
        close(descriptor)
        if case .replacing(let temporary, _) = target { unlink(temporary) }
    }

    /// Adds `text` to the output.
    func write(_ text: String) {
        var text = text
        text.withUTF8 { write(bytes: $0) }
    }

    /// Adds `bytes` to the output: small writes gather in the buffer, a large one goes out as
    /// it is (no copy of a whole document).
    func write(bytes: UnsafeBufferPointer<UInt8>) {
        guard failure == nil else { return }
        if buffer.count + bytes.count < Self.chunk {
            buffer.append(contentsOf: bytes)
            return
        }
        flush()
        send(UnsafeRawBufferPointer(bytes))
    }

    /// Adds `bytes` to the output.
    func write(bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write(bytes: $0) }
    }

    /// Writes out what is buffered; a failure is remembered for ``finish()``.
    private func flush() {
        defer { buffer.removeAll(keepingCapacity: true) }
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { send($0) }
    }

    /// Writes `bytes` out now, unless a write failed before.
    private func send(_ bytes: UnsafeRawBufferPointer) {
        guard failure == nil, let problem = Self.writeAll(bytes, to: descriptor) else { return }
        // A reader that has gone (`nodescope tree app | head -1`) ends the command quietly.
        if case .standardOutput = target, problem == EPIPE { Terminal.quietExit() }
        failure = SystemErrorText.describe(problem)
    }

    /// Writes out the rest and puts the file in place.
    ///
    /// - Throws: ``CLIError`` naming the file and the reason when any write failed (the file
    ///   asked for is then left as it was).
    func finish() throws(CLIError) {
        flush()
        defer { descriptor = -1 }
        switch target {
        case .standardOutput:
            if let failure { throw CLIError("cannot write standard output: \(failure)") }
        case .inPlace:
            if close(descriptor) != 0, failure == nil { failure = SystemErrorText.describe(errno) }
            if let failure { throw CLIError("cannot write \(name): \(failure)") }
        case .replacing(let temporary, let final):
            // Written to the disk before the rename: a full disk that only says so when the
            // data is flushed must not leave a short file in place of a good one.
            if failure == nil, fsync(descriptor) != 0, errno != EINVAL { failure = SystemErrorText.describe(errno) }
            if close(descriptor) != 0, failure == nil { failure = SystemErrorText.describe(errno) }
            if failure == nil, rename(temporary, final) != 0 { failure = SystemErrorText.describe(errno) }
            if let failure {
                unlink(temporary)
                throw CLIError("cannot write \(name): \(failure)")
            }
        }
    }

    /// The descriptor a path names when it stands for one this process already has:
    /// `/dev/stdout`, `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`.
    static func inheritedDescriptor(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdout": return 1
        case "/dev/stderr": return 2
        default: break
        }
        for prefix in ["/dev/fd/", "/proc/self/fd/"] where path.hasPrefix(prefix) {
            guard let number = Int32(path.dropFirst(prefix.count)), number >= 0, fcntl(number, F_GETFD) >= 0 else { return nil }
            return number
        }
        return nil
    }

    /// What a file of `mode` is, in words.
    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFIFO: "named pipe"
        case S_IFSOCK: "socket"
        case S_IFBLK: "block device"
        default: "file"
        }
    }

    /// Writes every byte, retrying interrupted and short writes; the error number of a failure.
    private static func writeAll(_ raw: UnsafeRawBufferPointer, to descriptor: Int32) -> Int32? {
        guard let base = raw.baseAddress else { return nil }
        var offset = 0
        while offset < raw.count {
            // At most 1 MiB a call: a signal or a pipe's reader sees progress in steps.
            let written = Glibc.write(descriptor, base + offset, min(raw.count - offset, 1 << 20))
            if written > 0 {
                offset += written
            } else if written < 0, errno == EINTR || errno == EAGAIN {
                if errno == EAGAIN {
                    // Standard output left non-blocking by another program: wait until it drains.
                    var entry = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&entry, 1, 1_000)
                }
            } else {
                return written == 0 ? ENOSPC : errno
            }
        }
        return nil
    }
}
