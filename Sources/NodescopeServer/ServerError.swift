/// Why the daemon could not start or serve, in words a person can act on.
package struct ServerError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure it was.
    package enum Code: String, Sendable {
        /// Another collector answers on the socket path.
        case alreadyRunning
        /// The socket's directory is not ours or cannot be made private.
        case unsafeDirectory
        /// The socket could not be created or bound.
        case bindFailed
        /// Something other than a socket is at the socket path (a file, a directory): the
        /// collector neither removes it nor listens there.
        case notASocket
        /// The collector was asked for its state before ``CollectorServer/start()`` (or after
        /// it failed to start).
        case notStarted
        /// The socket path is too long for a Unix socket.
        case pathTooLong
        /// The socket path is empty or holds a NUL byte (which would name an abstract socket,
        /// one that any user may reach).
        case invalidPath
    }

    /// What kind of failure it was.
    package let code: Code
    /// What happened and what to do.
    package let message: String
    /// The cause, if any.
    package let underlying: (any Error & Sendable)?

    /// Creates an error.
    package init(_ code: Code, _ message: String, underlying: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.underlying = underlying
    }

    /// The message, with the cause when there is one.
    package var description: String {
        underlying.map { "\(message) (\($0))" } ?? message
    }
}
