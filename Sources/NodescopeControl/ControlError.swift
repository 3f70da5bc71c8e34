/// Why a control client could not get an answer from a collector: one line for a person, and
/// what kind of failure it was, so that a command can choose its exit code.
package struct ControlError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kinds of failure.
    package enum Kind: Sendable, Equatable {
        /// Nothing answers on the socket (no collector, a stale socket file).
        case unreachable
        /// The socket's place or the collector's user is not to be trusted (`SocketTrust`).
        case untrusted
        /// The path cannot be a Unix socket address (over 107 bytes).
        case pathTooLong
        /// The collector accepted the connection but did not answer in time.
        case timedOut
        /// The collector closed the connection or it failed.
        case wentAway
        /// The collector refused the client's hello.
        case helloRefused
        /// The collector sent something that is not the protocol.
        case malformed
    }

    /// What kind of failure.
    package var kind: Kind
    /// What happened and what to do, naming the socket.
    package var message: String

    /// Creates an error.
    package init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The message.
    package var description: String { message }
}
