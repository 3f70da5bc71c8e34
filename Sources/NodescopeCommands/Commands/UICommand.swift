import ArgumentParser
import Foundation
import Glibc
import Logging
import NodescopeControl
import NodescopeRecording
import NodescopeReports
import NodescopeServer
import NodescopeSocket
import NodescopeWeb
import Synchronization

/// `nodescope ui`: the web view of every process's live tree.
struct UICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ui",
        abstract: "Serve a live web view of every process's tree on 127.0.0.1 and print its address.",
        discussion: """
            The page shows the processes, the live tree of the one you choose, its leaks with what \
            holds them, node details and the diagram. It listens on loopback only and needs the \
            token in the printed address (then a cookie). Without a running daemon it starts an \
            embedded collector on the socket, as the other commands do. Ends on Ctrl-C.

            With --from FILE it serves a recording (see `nodescope record`) instead, with a time \
            slider: the tree and leaks at any instant, play and step buttons, and an address that \
            keeps the instant (?at=12.5, ?at=event:N, ?at=end).
            """)

    @Option(help: "The port to listen on (0 picks a free one).")
    var port: Int = 0

    @Flag(
        help:
            "Open the address in the desktop's browser (xdg-open), through a page that only you can read: the token stays out of the opener's arguments."
    )
    var open = false

    @Option(help: "Serve this recording (see `nodescope record`) with a time slider, instead of the live collector.")
    var from: String?

    @OptionGroup var connection: ConnectionOptions

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() async throws {
        var logger = Logger(label: "nodescope.ui")
        logger.logLevel = .notice
        let (feed, embedded) = try await openFeed()
        let web = WebViewServer(feed: feed, port: port, logger: logger)
        let open = self.open
        let handoff = BrowserHandoff()
        defer { handoff.remove() }
        do {
            try await web.run { url in UICommand.announce(url, open: open, handoff: handoff) }
        } catch {
            await embedded?.stop()
            throw CLIError(
                "the web view could not serve on 127.0.0.1:\(port): \(error); choose another port with --port (0 picks a free one)")
        }
        await embedded?.stop()
    }

    /// What the page shows: the recording of `--from` (a clear error, exit 1, when it is none),
    /// with its keyframes made; else the collector on the socket, an embedded one started when
    /// no daemon answers (returned, to stop when the page does).
    private func openFeed() async throws -> (WebViewServer.Feed, CollectorServer?) {
        if let from {
            let reader = try RecordingInput.open(from)
            for warning in reader.warnings { Terminal.note("\(from): \(warning)") }
            let name = URL(fileURLWithPath: from).lastPathComponent
            return (.recording(RecordingSource(name: name, reader: reader)), nil)
        }
        let socket = connection.socketPath
        try ControlClient.checkPlace(of: socket)
        guard !CollectorServer.isAnswering(at: socket) else { return (.collector(socketPath: socket), nil) }
        let server = CollectorServer(socketPath: socket, settings: .init(), logger: .quiet)
        do {
            try await server.start()
        } catch {
            throw CLIError("no daemon runs on \(socket), and an embedded collector could not start there: \(error)")
        }
        Terminal.note("no daemon on \(socket); started an embedded collector (it stops with this command)")
        return (.collector(socketPath: socket), server)
    }

    /// Prints the address (the one line on standard output) and opens it when asked: the opener
    /// gets the path of a page that only this user can read (``BrowserHandoff``), never the
    /// tokened address itself, which any local user could read in its arguments.
    static func announce(_ url: String, open: Bool, handoff: BrowserHandoff = BrowserHandoff()) {
        Terminal.write(url + "\n")
        Terminal.note("web view on \(url) (loopback only; the token is this session's). Ctrl-C ends it.")
        guard open else { return }
        guard let opener = executable(named: "xdg-open") else {
            Terminal.note("--open: no xdg-open on PATH (apt-get install xdg-utils); open the address above yourself")
            return
        }
        let page: String
        do {
            page = try handoff.write(url)
        } catch {
            Terminal.note("--open: \(error.message); open the address above yourself")
            return
        }
        // posix_spawn, not Foundation's Process: its run() can crash the caller on this
        // toolchain (an over-read while it lists /proc/self/fd; swift-corelibs-foundation#5472).
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for descriptor: Int32 in 0...2 {
            posix_spawn_file_actions_addopen(&actions, descriptor, "/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY, 0)
        }
        CommandSpawn.closeDescriptors(from: 3, in: &actions)
        switch CommandSpawn.spawn(["xdg-open", page], path: opener, environment: environ, actions: &actions) {
        case .success(let pid):
            // xdg-open hands the page to the browser and ends; reap it so it leaves no zombie.
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            }
        case .failure(let failure):
            Terminal.note("--open: \(CommandSpawn.describe(failure, running: opener)); open the address above yourself")
        }
    }

    /// The first executable file called `name` in the directories of PATH.
    static func executable(named name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }
}

/// Carries the tokened address to the browser without showing it to any other local user: a page
/// that sends the browser on to the address, in a new directory of mode 0700 (under
/// `$XDG_RUNTIME_DIR` when it is ours and private, else the temporary directory), as a file of
/// mode 0600. The opener is given the file's path, which holds no secret. The page is removed
/// two minutes after it was written (time for a browser to start and read it), or when `ui` ends.
final class BrowserHandoff: Sendable {
    /// How long the page stays for the browser to read it.
    static let lifetimeSeconds: UInt64 = 120
    private let directory = Mutex<String?>(nil)

    /// Writes the page that sends the browser to `url`, and returns its path.
    func write(_ url: String) throws(CLIError) -> String {
        let base = Self.privateBase()
        var template = Array("\(base)/nodescope-open-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ $0.baseAddress.flatMap { mkdtemp($0) } }) else {
            throw CLIError("cannot make a private directory in \(base): \(SystemErrorText.describe(errno))")
        }
        let folder = String(cString: made)
        directory.withLock { $0 = folder }
        let path = folder + "/open.html"
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw CLIError("cannot write \(path): \(SystemErrorText.describe(errno))")
        }
        defer { close(descriptor) }
        fchmod(descriptor, 0o600)
        let bytes = Array(Self.page(redirectingTo: url).utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw CLIError("cannot write \(path): \(SystemErrorText.describe(errno))")
        }
        let handoff = self
        Task.detached {
            try? await Task.sleep(nanoseconds: Self.lifetimeSeconds * 1_000_000_000)
            handoff.remove()
        }
        return path
    }

    /// Removes the page and its directory, if they are still there.
    func remove() {
        let taken = directory.withLock { current -> String? in
            defer { current = nil }
            return current
        }
        guard let folder = taken else { return }
        unlink(folder + "/open.html")
        rmdir(folder)
    }

    /// `$XDG_RUNTIME_DIR` when it is a directory of ours that no one else may enter, else the
    /// temporary directory (where the new directory's own mode keeps others out).
    static func privateBase() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            var status = stat()
            if lstat(runtime, &status) == 0, status.st_mode & S_IFMT == S_IFDIR, status.st_uid == getuid(),
                status.st_mode & 0o077 == 0
            {
                return runtime
            }
        }
        let temporary = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? "/tmp"
        return temporary.count > 1 && temporary.hasSuffix("/") ? String(temporary.dropLast()) : temporary
    }

    /// A page that replaces itself with `url` at once (a meta refresh, and a script for browsers
    /// that ignore it in files), with a link for the person if neither works.
    static func page(redirectingTo url: String) -> String {
        let escaped = XMLText.escaped(url)
        return """
            <!doctype html>
            <html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer">
            <meta http-equiv="refresh" content="0;url=\(escaped)"><title>Nodescope</title></head>
            <body><p><a href="\(escaped)">Open the Nodescope web view</a></p>
            <script>location.replace(document.querySelector("a").href)</script></body></html>

            """
    }
}
