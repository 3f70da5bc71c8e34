import Foundation
import Testing

@testable import NodescopeExport

/// `--metrics-token-file`: a file only its user can read, and a bearer token compared whole.
@Suite struct MetricsTokenTests {
    static func file(_ contents: String, mode: Int) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("token-\(UUID().uuidString)").path
        FileManager.default.createFile(atPath: path, contents: Data(contents.utf8), attributes: [.posixPermissions: mode])
        return path
    }

    @Test func aPrivateFilesTokenAdmitsItsBearerOnly() throws {
        let path = try Self.file("s3cr3t-s3cr3t-s3cr3t\n", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let token = try MetricsToken(contentsOfFile: path)
        #expect(token.admits(authorization: "Bearer s3cr3t-s3cr3t-s3cr3t"))
        #expect(token.admits(authorization: "bearer s3cr3t-s3cr3t-s3cr3t"))
        for wrong in [
            nil, "", "Bearer", "Bearer s3cr3t-s3cr3t-s3cr3", "Bearer s3cr3t-s3cr3t-s3cr3t ", "Basic s3cr3t-s3cr3t-s3cr3t",
            "Bearer S3cr3t-s3cr3t-s3cr3t", "s3cr3t-s3cr3t-s3cr3t",
        ] {
            #expect(!token.admits(authorization: wrong), "\(wrong ?? "nil")")
        }
    }

    @Test func aFileOthersCanReadAShortTokenAndNoFileAreRefusedWithTheirReason() throws {
        let open = try Self.file("s3cr3t-s3cr3t-s3cr3t", mode: 0o644)
        defer { try? FileManager.default.removeItem(atPath: open) }
        #expect(throws: MetricsToken.Refusal.self) { try MetricsToken(contentsOfFile: open) }
        do {
            _ = try MetricsToken(contentsOfFile: open)
        } catch {
            #expect(error.description.contains("chmod 600"), "\(error)")
        }
        let short = try Self.file("short", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: short) }
        do {
            _ = try MetricsToken(contentsOfFile: short)
            Issue.record("a 5-character token was taken")
        } catch {
            #expect(error.description.contains("at least 16"), "\(error)")
        }
        do {
            _ = try MetricsToken(contentsOfFile: "/nonexistent/token")
            Issue.record("a missing file was taken")
        } catch {
            #expect(error.description.contains("cannot open"), "\(error)")
        }
        let spaced = try Self.file("s3cr3t s3cr3t s3cr3t", mode: 0o600)
        defer { try? FileManager.default.removeItem(atPath: spaced) }
        #expect(throws: MetricsToken.Refusal.self) { try MetricsToken(contentsOfFile: spaced) }
    }
}
