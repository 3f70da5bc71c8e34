import Testing

@testable import NodescopeServer

/// The server never binds an abstract socket: a path must name a file.
@Suite("Socket paths that name no file")
struct SocketPathCheckTests {
    /// A path, shown escaped in the test's name (a NUL must not reach the test log raw).
    struct PathArgument: CustomTestStringConvertible, Sendable {
        let path: String
        var testDescription: String { path.debugDescription }
    }

    @Test(arguments: ["", "\u{0}nodescope", "/tmp/a\u{0}b.sock"].map(PathArgument.init))
    func aPathThatNamesNoFileIsRefused(_ argument: PathArgument) throws {
        let path = argument.path
        #expect(throws: ServerError.self) { try SocketPlacement.prepare(path) }
        do {
            _ = try CollectorServer.socketAddress(path)
            Issue.record("an address was made for \(path.debugDescription)")
        } catch let error as ServerError {
            #expect(error.code == .invalidPath)
            #expect(!error.message.contains("\u{0}"))
        }
    }

    @Test func aServerOnAnEmptyPathDoesNotStart() async throws {
        let server = CollectorServer(socketPath: "")
        await #expect(throws: ServerError.self) { try await server.start() }
    }
}
