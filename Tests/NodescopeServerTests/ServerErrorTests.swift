import Glibc
import Testing

@testable import NodescopeServer

/// Each refusal of the daemon carries the code of what happened, so that a caller (and a person
/// reading the message) is not told "bind failed" when nothing was bound.
@Suite("Server errors that say what happened")
struct ServerErrorTests {
    /// A private scratch directory (mode 0700, ours), which the socket rules trust.
    private func privateDirectory() throws -> String {
        var template = Array("/tmp/nodescope-server-error-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) } }
        try #require(made != nil)
        return String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test func aFileAtTheSocketPathIsNotASocket() throws {
        let directory = try privateDirectory()
        defer {
            unlink(directory + "/collector.sock")
            rmdir(directory)
        }
        let path = directory + "/collector.sock"
        let descriptor = open(path, O_CREAT | O_WRONLY, 0o600)
        try #require(descriptor >= 0)
        close(descriptor)
        do {
            try SocketPlacement.prepare(path)
            Issue.record("a regular file was taken for a socket")
        } catch {
            #expect(error.code == .notASocket)
            #expect(error.message == "\(path) exists and is not a socket; remove it or choose another --socket")
        }
        var info = stat()
        #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "the file was left alone")
    }

    @Test func aServerAskedBeforeItStartedSaysItHasNotStarted() async {
        let server = CollectorServer(socketPath: "/nonexistent/nodescope-never-started.sock")
        do {
            _ = try await server.withCollector { _ in 0 }
            Issue.record("a collector answered before it started")
        } catch let error as ServerError {
            #expect(error.code == .notStarted)
            #expect(error.message.hasPrefix("the collector has not started"))
        } catch {
            Issue.record("unexpected error: \(error)")
        }
    }
}
