/// A host broke a session rule of the protocol: the server closes that connection (an abnormal
/// end of the session) and logs ``description``.
///
/// A failed ``Collector/ingest(_:session:now:)`` changes nothing; other sessions are unaffected.
public struct SessionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of rule was broken.
    public enum Code: String, Equatable, Sendable, Codable, CaseIterable {
        /// The session was never opened, or has been dropped.
        case unknownSession
        /// A frame that has no place here: a control or handshake frame on a host stream, a second
        /// hello, any frame after goodbye or after the session ended, an event between `dropped`
        /// and its snapshot.
        case unexpectedMessage
        /// A string id used before its `defineString`.
        case unknownString
        /// A string id defined twice (or the id 0).
        case duplicateString
        /// An event for a node that was never attached (outside a snapshot: that is not one the
        /// collector recently removed as clean).
        case unknownNode
        /// An attach of an id that is already known (ids are never reused).
        case duplicateNode
        /// An `objectReleased` of an object never added, or already released.
        case unknownObject
        /// An `objectAdded` with an index already used in that node.
        case duplicateObject
        /// A `nodeDetached` for a node that is already detached.
        case alreadyDetached
        /// A delta whose sequence is not greater than the previous one's (or than the last
        /// snapshot's), or a frame in a snapshot that does not carry the snapshot's sequence.
        case sequenceRegression
        /// A snapshot begun inside a snapshot, a snapshot end without its begin (or naming another
        /// sequence), or a frame inside a snapshot that may not appear there.
        case snapshotNesting
        /// A snapshot whose number of `nodeAttached` frames differs from its announced count.
        case snapshotCountMismatch
        /// The session's tree would exceed ``CollectorSettings/maxNodesPerSession``.
        case tooManyNodes
        /// The session's strings would exceed ``CollectorSettings/maxStringsPerSession`` or
        /// ``CollectorSettings/maxStringBytesPerSession``, or the strings of every session kept
        /// would exceed ``CollectorSettings/maxStringBytesTotal`` once no ended session is left
        /// to drop.
        case tooManyStrings
        /// The session's objects would exceed ``CollectorSettings/maxObjectsPerSession``.
        case tooManyObjects
    }

    /// What kind of rule was broken.
    public var code: Code
    /// One sentence that says what happened, such as
    /// "stateChanged names node 42, which was never attached".
    public var message: String

    /// Creates an error.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, prefixed so that it reads well in a log line.
    public var description: String { "nodescope session: \(message)" }
}
