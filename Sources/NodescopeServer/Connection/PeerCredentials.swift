import Glibc
import NIOCore
import NodescopeSocket

/// The credentials of the process at the other end of a Unix socket (`SO_PEERCRED`), laid out
/// like Linux's `struct ucred`, which Swift's Glibc module does not import.
struct PeerCredentials: Sendable {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0

    /// `SO_PEERCRED` on Linux.
    private static let option = SocketOptionName(SocketTrust.peerCredentialsOption)

    /// Reads the peer's credentials; nil when the channel cannot tell.
    static func of(_ channel: Channel) -> EventLoopFuture<PeerCredentials?> {
        guard let provider = channel as? SocketOptionProvider else {
            return channel.eventLoop.makeSucceededFuture(nil)
        }
        return provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: option)
            .map { (credentials: PeerCredentials) -> PeerCredentials? in credentials }
            .recover { _ in nil }
    }
}
