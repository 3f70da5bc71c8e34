import Foundation
import Glibc
import NodescopeCollector
import NodescopeReports
import NodescopeServer
import NodescopeSocket
import NodescopeSource
import Synchronization

/// What the private collector of a `check` run saw: every host process, every leak record and,
/// for each session with a leak, its tree (kept by the collector after the session ended).
struct CheckFindings: Sendable {
    /// Every host session, connected ones first.
    var processes: [ProcessSummary]
    /// Every leak record, in flag order.
    var leaks: [LeakRecord]
    /// The trees of the sessions that have leak records.
    var trees: [SessionID: TreeView]
    /// The tests the processes attached nodes under (protocol version 2).
    var tests: [TestInfo] = []
    /// The lives of the nodes of each session, when the run keeps them (OTLP traces).
    var lifetimes: [SessionID: (lifetimes: [NodeLifetime], untracked: Int)] = [:]
    /// Why the collector could not say what it saw, when it could not (the reports then say so,
    /// and the run exits 2).
    var collectorFailure: String? = nil
}

/// The lives of the nodes of every session of a `check` run, from the changes its collector
/// makes (on the collector's loop: each batch is applied under a lock, in order). At most
/// ``limit`` lives a session are kept; nodes past it are counted.
final class LifetimeRecorder: Sendable {
    /// Lives kept per session.
    static let limit = 100_000
    private let logs = Mutex<[SessionID: LifetimeLog]>([:])

    /// Applies batches of changes, in order.
    func apply(_ batches: [ObservedChanges]) {
        logs.withLock { logs in
            for batch in batches {
                logs[batch.session, default: LifetimeLog(startNanos: 0, limit: Self.limit)]
                    .apply(batch.changes, at: batch.arrivalNanos) { batch.treeAfterResync }
            }
        }
    }

    /// Every session's lives, in attach order.
    func finished() -> [SessionID: (lifetimes: [NodeLifetime], untracked: Int)] {
        logs.withLock { logs in logs.mapValues { ($0.finished(), $0.untracked) } }
    }
}

/// The private collector of one `check` run: an embedded ``CollectorServer`` on a socket in a
/// fresh private directory, asking hosts to hold their exit for pending graces.
final class CheckCollector: Sendable {
    /// The private directory (mode 0700) that holds the socket.
    let directory: String
    /// The socket that the command's processes are pointed at (`NODESCOPE_SOCKET`).
    let socketPath: String
    /// The socket's name in the private directory.
    static let socketName = "c.sock"
    /// The leak grace, in nanoseconds.
    let graceNanos: UInt64
    private let server: CollectorServer
    private let lives: LifetimeRecorder?

    private init(directory: String, graceNanos: UInt64, recordDirectory: String?, keepLifetimes: Bool) {
        self.directory = directory
        self.socketPath = directory + "/" + Self.socketName
        self.graceNanos = graceNanos
        // Every ended process is kept until the end of the run, however long it is and however
        // many processes it starts (the daemon's defaults drop them after 10 minutes, or past 64,
        // or to make room for a live host's strings): a dropped process would take its leaks
        // out of the verdict. An ended process keeps only the strings its tree names.
        let settings = CollectorSettings(
            graceNanos: graceNanos, holdExit: true, endedSessionRetentionNanos: .max, maxEndedSessions: .max,
            maxStringBytesTotal: .max)
        let lives = keepLifetimes ? LifetimeRecorder() : nil
        self.lives = lives
        var observer: ChangeObserver?
        if let lives {
            observer = { batches in
                lives.apply(batches)
                return []
            }
        }
        self.server = CollectorServer(
            socketPath: socketPath, settings: settings, logger: .quiet, recordDirectory: recordDirectory, changeObserver: observer)
    }

    /// Makes the private directory and starts listening.
    /// With `recordDirectory`, each process's stream is recorded there (`check --record`); with
    /// `keepLifetimes`, the life of every node is kept (``CheckFindings/lifetimes``).
    static func start(
        graceNanos: UInt64, recordDirectory: String? = nil, keepLifetimes: Bool = false
    ) async throws(CLIError) -> CheckCollector {
        let directory = try makePrivateDirectory()
        let collector = CheckCollector(
            directory: directory, graceNanos: graceNanos, recordDirectory: recordDirectory, keepLifetimes: keepLifetimes)
        do {
            try await collector.server.start()
        } catch {
            rmdir(directory)
            throw CLIError("cannot start the private collector on \(collector.socketPath): \(error)")
        }
        return collector
    }

    /// Waits until every host session has ended (at most `waitExitNanos`, or until `check` is
    /// interrupted). If a host is still connected then, waits one more grace so that its
    /// detached nodes are judged. Then reads what the collector saw.
    func settle(waitExitNanos: UInt64, interrupted: @Sendable () -> Bool) async throws(CLIError) -> CheckFindings {
        let deadline = DispatchTime.now().uptimeNanoseconds &+ waitExitNanos
        // The last bytes of a host that just exited (even its hello) may still be unread on the
        // collector's loop: settled means no host connected in two reads 25 ms apart, with the
        // same number of sessions.
        var previous = (sessions: -1, connected: -1)
        var connected = 0
        while true {
            try? await Task.sleep(for: .milliseconds(25))
            let now = try await read { collector, _ in
                let processes = collector.processes()
                return (sessions: processes.count, connected: processes.filter(\.isConnected).count)
            }
            connected = now.connected
            if now.connected == 0, now == previous { break }
            if DispatchTime.now().uptimeNanoseconds >= deadline || interrupted() { break }
            previous = now
        }
        if connected > 0, !interrupted() {
            // Hosts that outlive the command (daemons it started): their pending graces run out now.
            try? await Task.sleep(for: .nanoseconds(graceNanos + 50_000_000))
        }
        var findings = try await read { collector, stamp in
            let leaks = collector.leaks(nil)
            var trees: [SessionID: TreeView] = [:]
            // Each stamped with when it stands so, as the daemon's `tree` answers: a picture says when.
            for session in Set(leaks.map(\.session)) { trees[session] = collector.tree(session).map(stamp) }
            return CheckFindings(processes: collector.processes(), leaks: leaks, trees: trees, tests: collector.tests(nil))
        }
        // The closures on retainer paths by their source, on this side, after the run; the trees'
        // too: their leaks' pictures carry the same paths.
        findings.leaks = await ClosureNaming.shared.named(findings.leaks)
        if let lives { findings.lifetimes = lives.finished() }
        for (session, tree) in findings.trees { findings.trees[session] = await ClosureNaming.shared.named(tree) }
        return findings
    }

    /// The recordings (`check --record`) that could not be written, each as `PATH: REASON`;
    /// after ``stop()``, all of them. Their partial files are removed: a recording cut short by
    /// a full disk is not left where it was asked for.
    func failedRecordings() async -> [String] {
        await server.failedRecordings().map { outcome in
            var info = stat()
            if lstat(outcome.path, &info) == 0, info.st_mode & S_IFMT == S_IFREG { unlink(outcome.path) }
            return outcome.error ?? "cannot write \(outcome.path)"
        }
    }

    /// Stops listening and removes the socket and its directory.
    func stop() async {
        await server.stop()
        unlink(socketPath)
        rmdir(directory)
    }

    private func read<T: Sendable>(
        _ body: @escaping @Sendable (Collector, _ stamp: (TreeView) -> TreeView) -> T
    ) async throws(CLIError) -> T {
        do {
            return try await server.withCollector(stamping: body)
        } catch {
            throw CLIError("cannot read the private collector: \(error)")
        }
    }

    /// A fresh directory `nodescope-check-XXXXXX` (mode 0700) under `$TMPDIR` when a socket path
    /// there fits a Unix socket's limit, else under /tmp.
    private static func makePrivateDirectory() throws(CLIError) -> String {
        var base = ProcessInfo.processInfo.environment["TMPDIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/tmp"
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        // The socket path must stay under 108 bytes: template + "/c.sock".
        if base.utf8.count + "/nodescope-check-XXXXXX/c.sock".utf8.count >= 108 { base = "/tmp" }
        // Directories of runs that were killed with their guard, left behind.
        CheckDirectoryClaim.removeStale(under: base)
        var template = Array((base + "/" + CheckDirectoryClaim.prefix + "XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw CLIError(
                "cannot create a private directory under \(base) for the collector's socket: \(SystemErrorText.describe(errno))")
        }
        let directory = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        CheckDirectoryClaim.claim(directory)
        return directory
    }
}
