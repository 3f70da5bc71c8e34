/// Fixed limits and constants of the Nodescope wire protocol (versions 1 to 3).
///
/// Both ends enforce these limits; a peer that exceeds one is closed.
public enum WireLimits {
    /// The largest allowed value of a frame's `length` field: the type byte plus the payload,
    /// not counting the 4-byte length prefix itself.
    public static let maxFrameLength = 65_536

    /// The largest allowed UTF-8 byte count of a `str` field.
    public static let maxStringBytes = 4_096

    /// The largest allowed byte count of a `bytes` field (a control response or event body).
    ///
    /// Leaves room below ``maxFrameLength`` for the fixed fields of the frame that carries it.
    public static let maxBodyBytes = maxFrameLength - 32

    /// The newest protocol version spoken by this implementation, the one its hellos name.
    public static let protocolVersion: UInt16 = 3

    /// Every protocol version this implementation speaks. A connection speaks the lower of the
    /// peer's version and ``protocolVersion``; a peer of version 1 never sees a version 2 frame,
    /// nor one of version 2 a closure site (version 3).
    public static let supportedVersions: ClosedRange<UInt16> = 1...3

    /// The four ASCII bytes `NSCP` (`4E 53 43 50`) that open every hello payload.
    public static let magic: [UInt8] = [0x4E, 0x53, 0x43, 0x50]

    /// ``magic`` read as a little-endian `UInt32`, for a single comparison on the hot path.
    static let magicWord: UInt32 = 0x5043_534E

    /// The size of the frame header: the 4-byte length and the type byte.
    public static let frameHeaderBytes = 5
}
