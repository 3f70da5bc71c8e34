import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// Runs a sample as a user would, against a real `nodescope daemon` on a private socket, and
/// reads back what the collector saw with the real `nodescope` CLI.
struct SampleHarness {
    /// The collector's grace in these tests: short, so that leak verdicts come quickly.
    static let grace = 0.3

    let socket: String
    private let daemon: ChildProcess

    /// Starts a daemon and waits until it answers.
    init() throws {
        socket = makeScratchDirectory().appendingPathComponent("c.sock").path
        daemon = try ChildProcess(
            "nodescope", ["daemon", "--socket", socket, "--grace", "\(Int(Self.grace * 1000))ms", "--log-level", "warning"])
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if FileManager.default.fileExists(atPath: socket), (try? run(["ps"]).status) == 0 { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        Issue.record("the daemon did not start on \(socket)")
    }

    func stop() {
        daemon.stop()
    }

    /// Runs `nodescope ARGS --socket S` to completion: its status and stdout.
    func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = try ChildProcess("nodescope", arguments + ["--socket", socket])
        let status = process.waitForExit(seconds: 30)
        return (status, process.stdout)
    }

    /// Starts `sample` with `--hold 30` and `arguments`, reporting to the daemon, and waits until
    /// its script is done (it says `holding`).
    func startHeld(_ sample: String, _ arguments: [String] = []) throws -> ChildProcess {
        let host = try ChildProcess(sample, ["--hold", "30"] + arguments, environment: ["NODESCOPE_SOCKET": socket])
        #expect(host.waitForLine(prefix: "holding", seconds: 30) != nil, "\(sample) did not reach its hold:\n\(host.stdout)")
        return host
    }

    /// `nodescope tree PID --json`, asked again until `ready` holds (the collector may be a
    /// few events behind the host), at most 5 s.
    func tree(of host: ChildProcess, until ready: (TreeView) -> Bool = { _ in true }) throws -> TreeView {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let (status, output) = try run(["tree", "\(host.process.processIdentifier)", "--json"])
            #expect(status == 0, "nodescope tree failed:\n\(output)")
            let view = try JSONDecoder().decode(TreeView.self, from: Data(output.utf8))
            if ready(view) || Date() >= deadline { return view }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// `nodescope leaks PID --format json`, asked again until `ready` holds, at most 5 s.
    func leaks(of host: ChildProcess, until ready: ([LeakRecord]) -> Bool = { _ in true }) throws -> [LeakRecord] {
        let deadline = Date().addingTimeInterval(5)
        while true {
            let (status, output) = try run(["leaks", "\(host.process.processIdentifier)", "--format", "json"])
            #expect(status == 0, "nodescope leaks failed:\n\(output)")
            let leaks = try JSONDecoder().decode(LeaksJSON.self, from: Data(output.utf8)).leaks
            if ready(leaks) || Date() >= deadline { return leaks }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    /// Waits past the grace of everything the host detached before it said `holding`.
    func waitPastGrace() {
        Thread.sleep(forTimeInterval: Self.grace + 0.25)
    }

    /// Ends a held sample with SIGTERM and expects a clean exit.
    func terminate(_ host: ChildProcess) {
        host.signal(SIGTERM)
        #expect(host.waitForExit(seconds: 10) == 0, "the sample did not exit cleanly:\n\(host.stdout)")
        #expect(host.stdout.contains("stopping (signal)"))
    }
}

/// One line per node of a tree: its depth, kind, name, whether it is still attached, and its
/// live objects' roles. Placeholders (released nodes kept above a ghost) are left out.
func outline(_ view: TreeView) -> [String] {
    view.nodes.filter { !$0.isPlaceholder }.map { node in
        let alive = node.objects.filter(\.isAlive).map(\.role).joined(separator: ",")
        let place = node.status.isAttached ? "attached" : "detached"
        return "\(node.depth) \(node.kind) \(node.displayName) \(place) [\(alive)]"
    }
}

/// The retainer path of the alive object with `role`, one `holder reference` per hop (` *` marks
/// the suspect), after the verdict: `cycle: A .b -> B .a *`.
func chain(_ leak: LeakRecord, role: String) -> String {
    guard let object = leak.aliveObjects.first(where: { $0.role == role }),
        let path = leak.retainers.first(where: { $0.objectIndex == object.index })
    else { return "no path for \(role)" }
    let hops = path.hops.map { "\($0.holder) \($0.reference)\($0.isSuspect ? " *" : "")" }
    return "\(path.verdict.rawValue): " + hops.joined(separator: " -> ")
}

/// Whether the host has explained every alive object of every leak.
func everyLeakExplained(_ leaks: [LeakRecord]) -> Bool {
    !leaks.isEmpty && leaks.allSatisfy { $0.retainers.count >= $0.aliveObjects.count }
}

/// The alive roles of a leak, sorted.
func aliveRoles(_ leak: LeakRecord) -> [String] {
    leak.aliveObjects.map(\.role).sorted()
}

/// What a sample run to its end printed, and how it ended.
struct FinishedRun {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Runs `sample ARGS` alone (no collector: `NODESCOPE=off`) to its end, capturing both streams.
func runAlone(_ sample: String, _ arguments: [String]) throws -> FinishedRun {
    let run = try ChildProcess(sample, arguments, environment: ["NODESCOPE": "off"])
    let status = run.waitForExit(seconds: 60)
    return FinishedRun(status: status, stdout: run.stdout, stderr: run.stderr)
}

/// What `nodescope leaks --format json` writes, as these tests read it.
struct LeaksJSON: Decodable {
    /// One process covered.
    struct Process: Decodable {
        var pid: UInt32
        var counts: NodeCounts
        var exitFlushCut: FlushCut?
    }
    /// A cut exit flush.
    struct FlushCut: Decodable {
        var unverified: Int
        var paths: [[String]]
    }
    /// The counts of every record covered.
    var counts: NodeCounts
    /// The processes covered.
    var processes: [Process]
    /// The records, without the nodes of cut exit flushes.
    var leaks: [LeakRecord]
}
