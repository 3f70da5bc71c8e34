import Foundation
import ProcessTestSupport

/// Runs a built executable of this package to completion (through ``ChildProcess``, the one
/// way tests start processes), with both of its outputs.
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
        let child = try ChildProcess(executable, arguments, environment: environment, absolutePath: executable.hasPrefix("/"))
        let status = child.waitForExit(seconds: seconds)
        return Result(status: status, stdout: child.stdout, stderr: child.stderr)
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

/// Where the repository is: three levels above this file.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

/// Puts a link named `nodescope` to this checkout in `directory`, as the README's manifest
/// expects its dependency (`.package(path: "../nodescope")`): a package beside it depends on
/// this checkout under the README's name.
func linkCheckout(in directory: URL) throws {
    let fileManager = FileManager.default
    let link = directory.appendingPathComponent("nodescope")
    if (try? fileManager.destinationOfSymbolicLink(atPath: link.path)) != repositoryRoot.path {
        try? fileManager.removeItem(at: link)
        try fileManager.createSymbolicLink(at: link, withDestinationURL: repositoryRoot)
    }
}

/// The identities that a package's Package.resolved pins; none when it has no Package.resolved
/// (SwiftPM writes none when there is nothing to pin).
func resolvedIdentities(of package: URL) throws -> Set<String> {
    struct Resolved: Decodable {
        struct Pin: Decodable { var identity: String }
        var pins: [Pin]
    }
    guard let data = FileManager.default.contents(atPath: package.appendingPathComponent("Package.resolved").path) else {
        return []
    }
    return Set(try JSONDecoder().decode(Resolved.self, from: data).pins.map(\.identity))
}

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

/// The fixture package's scratch path, shared by the tests that build or test it
/// (CheckEndToEndTests, LeakWaysTests, TestAttributionTests): only the first build is slow.
let fixtureScratch = "/tmp/nodescope-fixture-build"

/// One user of ``fixtureScratch`` at a time. SwiftPM locks a scratch path too, but a command
/// that waits for that lock waits inside its own time bound; here the wait comes first, off the
/// clock. The tests that wait for it have a time limit of 20 minutes: a guard against a hang
/// that leaves room for the other users' runs.
func withFixtureScratch<T>(_ body: () throws -> T) rethrows -> T {
    fixtureScratchLock.lock()
    defer { fixtureScratchLock.unlock() }
    return try body()
}

private let fixtureScratchLock = NSLock()
