import Foundation
import ProcessTestSupport

/// Runs a built executable of this package to completion, capturing standard output and
/// standard error apart (ChildProcess keeps only standard output).
struct CheckRunner {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs `executable` (a product of this package, or an absolute path) with `arguments`;
    /// kills it after `seconds`.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = [:], seconds: Double = 60
    ) throws -> Result {
        let process = Process()
        process.executableURL = executable.hasPrefix("/")
            ? URL(fileURLWithPath: executable) : ChildProcess.binDirectory.appendingPathComponent(executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "NODESCOPE_SOCKET")
        for (key, value) in environment { env[key] = value }
        process.environment = env
        let stdout = Pipe()
        let stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        // Both pipes are drained while the process runs, so that neither can fill up and stall it.
        let collected = Collected()
        stdout.fileHandleForReading.readabilityHandler = { collected.append($0.availableData, error: false) }
        stderr.fileHandleForReading.readabilityHandler = { collected.append($0.availableData, error: true) }
        try process.run()
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
        stdout.fileHandleForReading.readabilityHandler = nil
        stderr.fileHandleForReading.readabilityHandler = nil
        collected.append(stdout.fileHandleForReading.readDataToEndOfFile(), error: false)
        collected.append(stderr.fileHandleForReading.readDataToEndOfFile(), error: true)
        let (out, err) = collected.texts
        return Result(status: process.terminationStatus, stdout: out, stderr: err)
    }

    /// Runs `nodescope check ARGS`.
    static func check(_ arguments: [String], environment: [String: String] = [:], seconds: Double = 60) throws -> Result {
        try run("nodescope", ["check"] + arguments, environment: environment, seconds: seconds)
    }

    /// The path of a built executable of this package.
    static func binary(_ name: String) -> String {
        ChildProcess.binDirectory.appendingPathComponent(name).path
    }
}

/// Output gathered from two pipes' handlers (which run on other threads).
private final class Collected: @unchecked Sendable {
    // Only touched under `lock`.
    private let lock = NSLock()
    private var out = Data()
    private var err = Data()

    func append(_ data: Data, error: Bool) {
        lock.lock()
        defer { lock.unlock() }
        if error { err.append(data) } else { out.append(data) }
    }

    var texts: (String, String) {
        lock.lock()
        defer { lock.unlock() }
        return (String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}

/// Where the repository is: three levels above this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// A fresh directory for one test's reports.
func makeReportDirectory() -> URL {
    let url = URL(fileURLWithPath: "/tmp/nodescope-check-tests-\(UUID().uuidString.prefix(8))")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// Validates a JSON file against a JSON Schema with Python's jsonschema; nil when it is valid,
/// the validator's complaint otherwise. Throws `SchemaValidatorMissing` when python3 or its
/// jsonschema module is not installed.
func validate(_ file: URL, against schema: URL) throws -> String? {
    let script = """
        import json, sys
        try:
            import jsonschema
        except ImportError:
            sys.exit(3)
        schema = json.load(open(sys.argv[1]))
        document = json.load(open(sys.argv[2]))
        cls = jsonschema.validators.validator_for(schema)
        errors = sorted(cls(schema).iter_errors(document), key=lambda e: list(e.absolute_path))
        for error in errors[:5]:
            print("/".join(str(p) for p in error.absolute_path) + ": " + error.message)
        sys.exit(1 if errors else 0)
        """
    let result: CheckRunner.Result
    do {
        result = try CheckRunner.run("/usr/bin/env", ["python3", "-c", script, schema.path, file.path])
    } catch {
        throw SchemaValidatorMissing()
    }
    if result.status == 3 || result.status == 127 { throw SchemaValidatorMissing() }
    return result.status == 0 ? nil : result.stdout + result.stderr
}

/// python3 or its jsonschema module is missing.
struct SchemaValidatorMissing: Error, CustomStringConvertible {
    var description: String {
        "python3 with the jsonschema module is needed to validate the reports: install it with `pip install jsonschema` "
            + "(or `apt-get install python3-jsonschema`)"
    }
}
