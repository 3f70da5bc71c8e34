import Glibc
import NodescopeSocket
import Testing

/// The socket rules that hosts, clients and the collector share: first as pure rules on one
/// entry, then walked over real directories (which needs root, to give them to `nobody`).
@Suite("SocketTrust: whose socket it is")
struct SocketTrustTests {
    private let me: UInt32 = 1000
    private let other: UInt32 = 1001

    private func judge(_ kind: SocketTrust.Entry.Kind, owner: UInt32, mode: UInt32) -> SocketTrust.Refusal.Code? {
        SocketTrust.judge(SocketTrust.Entry(path: "/x", kind: kind, owner: owner, mode: mode), uid: me)?.code
    }

    @Test func anAncestorMayBeRootsStickyTmpButNotAnotherUsersEvenWhenSticky() {
        #expect(judge(.ancestor, owner: 0, mode: 0o1777) == nil)
        #expect(judge(.ancestor, owner: 0, mode: 0o755) == nil)
        #expect(judge(.ancestor, owner: me, mode: 0o700) == nil)
        #expect(judge(.ancestor, owner: me, mode: 0o1777) == nil)
        #expect(judge(.ancestor, owner: other, mode: 0o755) == .foreignOwner)
        #expect(judge(.ancestor, owner: other, mode: 0o1777) == .foreignOwner)
        #expect(judge(.ancestor, owner: me, mode: 0o777) == .writableByOthers)
        #expect(judge(.ancestor, owner: 0, mode: 0o775) == .writableByOthers)
    }

    @Test func theSocketsOwnDirectoryIsClosedToOthersStickyOrNot() {
        #expect(judge(.socketDirectory, owner: me, mode: 0o700) == nil)
        #expect(judge(.socketDirectory, owner: me, mode: 0o755) == nil)
        #expect(judge(.socketDirectory, owner: 0, mode: 0o755) == nil)
        #expect(judge(.socketDirectory, owner: 0, mode: 0o1777) == .writableByOthers, "/tmp itself holds no socket")
        #expect(judge(.socketDirectory, owner: me, mode: 0o1777) == .writableByOthers)
        #expect(judge(.socketDirectory, owner: me, mode: 0o770) == .writableByOthers)
        #expect(judge(.socketDirectory, owner: other, mode: 0o1700) == .foreignOwner)
        #expect(judge(.socketDirectory, owner: other, mode: 0o1777) == .foreignOwner)
        #expect(judge(.socketDirectory, owner: other, mode: 0o700) == .foreignOwner)
    }

    @Test func linksAndTheSocketMustBeOursOrRoots() {
        #expect(judge(.symlink, owner: me, mode: 0o777) == nil)
        #expect(judge(.symlink, owner: 0, mode: 0o777) == nil)
        #expect(judge(.symlink, owner: other, mode: 0o777) == .foreignSymlink)
        #expect(judge(.socket, owner: me, mode: 0o600) == nil)
        #expect(judge(.socket, owner: other, mode: 0o600) == .foreignOwner)
    }

    @Test func aRefusalSaysWhoOwnsWhat() throws {
        let refusal = try #require(
            SocketTrust.judge(
                SocketTrust.Entry(path: "/tmp/nodescope-1000", kind: .socketDirectory, owner: other, mode: 0o41777), uid: me))
        #expect(refusal.message.contains("/tmp/nodescope-1000") && refusal.message.contains("uid 1001"))
        let open = try #require(
            SocketTrust.judge(
                SocketTrust.Entry(path: "/srv/s", kind: .ancestor, owner: me, mode: 0o40777), uid: me))
        #expect(open.message.contains("mode 777"), "\(open.message)")
    }

    // MARK: Walking real directories

    private static let isRoot = getuid() == 0

    private func scratch() -> String {
        let path = "/tmp/nstrust-\(UInt32.random(in: 0...UInt32.max))"
        mkdir(path, 0o755)
        chmod(path, 0o755)
        return path
    }

    private func remove(_ path: String) {
        _ = path.withCString { system("rm -rf '\(String(cString: $0))'") }
    }

    @Test func ourOwnPrivateDirectoryIsTrustedAndMissingOnesAreNamed() {
        let base = scratch()
        defer { remove(base) }
        mkdir(base + "/private", 0o700)
        mkdir(base + "/private/sub", 0o700)
        #expect(SocketTrust.inspect(base + "/private/c.sock") == .absent(directory: base + "/private"))
        #expect(SocketTrust.inspect(base + "/private/./sub/../c.sock") == .absent(directory: base + "/private"))
        #expect(
            SocketTrust.inspect(base + "/a/b/c.sock") == .missingDirectory(existing: base, missing: ["a", "b", "c.sock"]))
        #expect(SocketTrust.inspect(base + "/private/") != .absent(directory: base + "/private"))
    }

    @Test(.enabled(if: isRoot, "needs root, to give directories to nobody: skipped"))
    func directoriesAndLinksOfAnotherUserAreRefused() {
        let base = scratch()
        defer { remove(base) }
        for mode: mode_t in [0o1777, 0o1700, 0o755] {
            let directory = base + "/theirs-\(String(mode, radix: 8))"
            mkdir(directory, 0o700)
            chown(directory, 65534, 65534)
            chmod(directory, mode)
            guard case .refused(let refusal) = SocketTrust.inspect(directory + "/c.sock") else {
                Issue.record("\(directory) was trusted")
                continue
            }
            #expect(refusal.code == .foreignOwner)
            #expect(refusal.message.contains("uid 65534"))
        }
        mkdir(base + "/mine", 0o700)
        symlink(base + "/mine", base + "/their-link")
        lchown(base + "/their-link", 65534, 65534)
        guard case .refused(let refusal) = SocketTrust.inspect(base + "/their-link/c.sock") else {
            Issue.record("a link of nobody was followed")
            return
        }
        #expect(refusal.code == .foreignSymlink)
        symlink("mine", base + "/our-link")
        #expect(SocketTrust.inspect(base + "/our-link/c.sock") == .absent(directory: base + "/mine"))
        // A link whose target is another user's directory is refused for the target.
        mkdir(base + "/theirs", 0o700)
        chown(base + "/theirs", 65534, 65534)
        symlink(base + "/theirs", base + "/to-theirs")
        if case .refused(let refusal) = SocketTrust.inspect(base + "/to-theirs/c.sock") {
            #expect(refusal.code == .foreignOwner)
        } else {
            Issue.record("a link to nobody's directory was trusted")
        }
    }
}
