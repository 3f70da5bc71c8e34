import Foundation

/// Runs the test executables (test-host, test-listener) as real child processes.
public final class ChildProcess: @unchecked Sendable {
    // Unchecked because its parts are: the process and the readers guard their own state.
    /// The underlying process.
    public let process: SpawnedProcess
    private let output: PipeReader
    private let errorOutput: PipeReader

    /// Starts `executable` (a product of this package) with `arguments`; stdout is collected.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], absolutePath: Bool = false
    ) throws {
        let path = absolutePath ? executable : ChildProcess.binDirectory.appendingPathComponent(executable).path
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NODESCOPE_SOCKET")
        // The hosts these tests start are debug builds on a machine busy with the other tests:
        // their retainer analyses get room (20 s an object instead of 50 ms), so that a test
        // about what a report says never reads "cut short" instead, in a plain `swift test` as
        // under tools/test. The bound itself is tested on its own, with a stepping clock.
        if env["NODESCOPE_RETAINER_MS"] == nil { env["NODESCOPE_RETAINER_MS"] = "20000" }
        for (key, value) in environment { env[key] = value }
        var outputEnds: [Int32] = [-1, -1]
        var errorEnds: [Int32] = [-1, -1]
        // Close-on-exec, so no other child started meanwhile holds a write end (pipe2 is not
        // in Swift's Glibc module; the child closes all but 0, 1 and 2 anyway).
        guard openPipe(&outputEnds) else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard openPipe(&errorEnds) else {
            close(outputEnds[0])
            close(outputEnds[1])
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
        defer {
            close(outputEnds[1])
            close(errorEnds[1])
        }
        do {
            process = try SpawnedProcess(
                path: path, arguments: arguments, environment: env, stdout: outputEnds[1], stderr: errorEnds[1])
        } catch {
            close(outputEnds[0])
            close(errorEnds[0])
            throw error
        }
        output = PipeReader(outputEnds[0])
        errorOutput = PipeReader(errorEnds[0])
    }

    /// Everything written to stdout so far.
    public var stdout: String { output.text }

    /// Everything written to stderr so far.
    public var stderr: String { errorOutput.text }

    /// Stdout so far, by line.
    public var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Waits until stdout has a line with `prefix`, at most `seconds`.
    @discardableResult
    public func waitForLine(prefix: String, seconds: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// Waits for the process to end, at most `seconds`; kills it after that.
    @discardableResult
    public func waitForExit(seconds: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        drain()
        return process.terminationStatus
    }

    /// Sends `signal` to the process if it still runs (a pid that was reaped may already be
    /// another process's).
    public func signal(_ signal: Int32) {
        guard process.isRunning, process.processIdentifier > 0 else { return }
        kill(process.processIdentifier, signal)
    }

    /// Kills the process if it still runs.
    public func stop() {
        if process.isRunning, process.processIdentifier > 0 {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// Waits for the last bytes once the process has ended (the readers run on their own
    /// threads and may not have seen them yet).
    private func drain() {
        output.waitForEnd(seconds: 10)
        errorOutput.waitForEnd(seconds: 10)
    }

    /// Where SwiftPM put the test bundle, and so the executables.
    public static let binDirectory: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("test-host").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()
}

/// Opens a pipe whose two ends are close-on-exec.
private func openPipe(_ ends: inout [Int32]) -> Bool {
    guard pipe(&ends) == 0 else { return false }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    return true
}

/// A fresh directory for one test's socket and recordings; short, because socket paths are.
public func makeScratchDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/nsag-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
