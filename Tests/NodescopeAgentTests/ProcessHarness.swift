import Foundation

/// Runs the test executables (test-host, test-listener) as real child processes.
final class ChildProcess: @unchecked Sendable {
    // Only the reading thread appends to `output`, under `lock`.
    let process = Process()
    private let pipe = Pipe()
    private let lock = NSLock()
    private var output = ""

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = ChildProcess.binDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NODESCOPE_SOCKET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardOutput = pipe
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
    var stdout: String {
        lock.lock()
        defer { lock.unlock() }
        return output
    }

    var lines: [String] { stdout.split(separator: "\n").map(String.init) }

    /// Waits until stdout has a line with `prefix`, at most `seconds`.
    @discardableResult
    func waitForLine(prefix: String, seconds: Double = 10) -> String? {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if let line = lines.first(where: { $0.hasPrefix(prefix) }) { return line }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }

    /// Waits for the process to end, at most `seconds`; kills it after that.
    @discardableResult
    func waitForExit(seconds: Double = 30) -> Int32 {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        Thread.sleep(forTimeInterval: 0.05)
        return process.terminationStatus
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    func stop() {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    deinit { stop() }

    /// Where SwiftPM put the test bundle, and so the executables.
    static let binDirectory: URL = {
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        while url.path != "/", !FileManager.default.fileExists(atPath: url.appendingPathComponent("test-host").path) {
            url.deleteLastPathComponent()
        }
        return url
    }()
}

/// A fresh directory for one test's socket and recordings; short, because socket paths are.
func makeScratchDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/nsag-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}
