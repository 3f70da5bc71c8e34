/// One part of the collector's answer to a request.
///
/// Wire layout (type `0x41`): u32 requestID, u8 status, u32 part, u8 isLast, bytes body
/// (u32 length, then the bytes; at most ``WireLimits/maxBodyBytes``).
/// The body is opaque to the wire layer.
public struct ControlResponseFrame: Equatable, Sendable {
    /// The id of the request this part answers.
    public var requestID: UInt32
    /// The outcome of the request.
    public var status: ResponseStatus
    /// The part's number, from 0.
    public var part: UInt32
    /// Whether this is the answer's last part.
    public var isLast: Bool
    /// The part's bytes. A longer body must be split with ``parts(requestID:status:body:)``;
    /// the encoder truncates one that is longer than ``WireLimits/maxBodyBytes``.
    public var body: [UInt8]

    /// Creates a response part.
    public init(requestID: UInt32, status: ResponseStatus, part: UInt32, isLast: Bool, body: [UInt8]) {
        self.requestID = requestID
        self.status = status
        self.part = part
        self.isLast = isLast
        self.body = body
    }

    /// Splits a body of any length into numbered parts that each fit in one frame.
    ///
    /// An empty body gives one empty part. The last part has `isLast` set.
    public static func parts(requestID: UInt32, status: ResponseStatus, body: [UInt8]) -> [ControlResponseFrame] {
        var result: [ControlResponseFrame] = []
        var start = body.startIndex
        var part: UInt32 = 0
        repeat {
            let end = body.index(start, offsetBy: WireLimits.maxBodyBytes, limitedBy: body.endIndex) ?? body.endIndex
            result.append(
                ControlResponseFrame(
                    requestID: requestID,
                    status: status,
                    part: part,
                    isLast: end == body.endIndex,
                    body: Array(body[start..<end])
                ))
            start = end
            part &+= 1
        } while start < body.endIndex
        return result
    }
}
