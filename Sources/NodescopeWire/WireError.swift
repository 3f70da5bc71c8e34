/// An error found while decoding the byte stream of a Nodescope connection.
///
/// Every wire error is fatal for the connection it was found on: a ``FrameDecoder`` that threw one
/// keeps throwing it, and the peer is expected to close the connection, logging ``message``.
public struct WireError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What kind of violation was found.
    public enum Code: String, Equatable, Sendable, CaseIterable {
        /// A frame's length field exceeds ``WireLimits/maxFrameLength``.
        case frameTooLarge
        /// A frame's length field is zero, so the frame has no type byte.
        case emptyFrame
        /// A frame's type byte is not one of ``FrameType``.
        case unknownType
        /// A payload ended before all of its fields were read, or the stream ended inside a frame.
        case truncatedPayload
        /// A payload has bytes left over after its last field.
        case trailingBytes
        /// A `str` field is not valid UTF-8.
        case invalidUTF8
        /// A `str` field is longer than ``WireLimits/maxStringBytes``.
        case stringTooLong
        /// A hello does not start with the magic bytes `NSCP`.
        case badMagic
        /// A hello or hello-accepted names a protocol version other than ``WireLimits/protocolVersion``.
        case unsupportedVersion
        /// A field holds a value outside its allowed set (an enum, a bool, a flag, a zero id).
        case invalidValue
    }

    /// What kind of violation was found.
    public var code: Code

    /// A sentence for a log that says what was wrong, e.g.
    /// "frame of 70000 bytes exceeds the 65536-byte limit".
    public var message: String

    /// Creates an error with a code and a message.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message, prefixed with the protocol name so that it reads well in a log line.
    public var description: String {
        "nodescope wire: \(message)"
    }
}
