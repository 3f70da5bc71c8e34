import Foundation

/// Runs the test executables (test-host, test-listener) as real child processes.
public final class ChildProcess: @unchecked Sendable {
    // Unchecked because it owns a Foundation `Process`, which is not Sendable (its handlers run
    // on other threads); the outputs are only touched under `lock`.
    /// The underlying process.
    public let process = Process()
    private let pipe = Pipe()
    private let errorPipe = Pipe()
    private var errorOutput = ""
    private let lock = NSLock()
    private var output = ""

    /// Starts `executable` (a product of this package) with `arguments`; stdout is collected.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], absolutePath: Bool = false
    ) throws {
        process.executableURL =
            absolutePath
            ? URL(fileURLWithPath: executable) : ChildProcess.binDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NODESCOPE_SOCKET")
        // The hosts these tests start are debug builds on a machine busy with the other tests:
        // their retainer analyses get room (20 s an object instead of 50 ms), so that a test
        // about what a report says never reads "cut short" instead, in a plain `swift test` as
        // under tools/test. The bound itself is tested on its own, with a stepping clock.
        if env["NODESCOPE_RETAINER_MS"] == nil { env["NODESCOPE_RETAINER_MS"] = "20000" }
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = pipe
        process.standardError = errorPipe
        errorPipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            lock.lock()
            errorOutput += String(decoding: data, as: UTF8.self)
            lock.unlock()
        }
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            guard let self, !data.isEmpty else { return }
            lock.lock()
            output += String(decoding: data, as: UTF8.self)
            lock.unlock()
        }
        try process.run()
    }

    /// Everything written to stdout so far.
    public var stdout: String {
        lock.lock()
        defer { lock.unlock() }
        return output
    }

    /// Everything written to stderr so far.
    public var stderr: String {
        lock.lock()
        defer { lock.unlock() }
        return errorOutput
    }

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

    /// Reads what is left in the pipe once the process has ended (the handler runs
    /// asynchronously and may not have seen the last bytes yet).
    private func drain() {
        pipe.fileHandleForReading.readabilityHandler = nil
        errorPipe.fileHandleForReading.readabilityHandler = nil
        let rest = pipe.fileHandleForReading.readDataToEndOfFile()
        let errorRest = errorPipe.fileHandleForReading.readDataToEndOfFile()
        lock.lock()
        output += String(decoding: rest, as: UTF8.self)
        errorOutput += String(decoding: errorRest, as: UTF8.self)
        lock.unlock()
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

/// A fresh directory for one test's socket and recordings; short, because socket paths are.
public func makeScratchDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/nsag-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
