/// A client's question to the collector.
///
/// Wire layout (type `0x40`): u32 requestID, u8 command, str argument, u32 depth, str rootPath.
public struct ControlRequestFrame: Equatable, Sendable {
    /// Chosen by the client; echoed by every response part.
    public var requestID: UInt32
    /// What the client asks for.
    public var command: ControlCommand
    /// A plain-text argument such as a pid or a process name; may be empty.
    /// Encoded truncated to ``WireLimits/maxStringBytes``.
    public var argument: String
    /// How many levels of a tree to return; 0 means unlimited.
    public var depth: UInt32
    /// The path of the subtree to focus on; empty for the whole tree.
    /// Encoded truncated to ``WireLimits/maxStringBytes``.
    public var rootPath: String

    /// Creates a request.
    public init(
        requestID: UInt32,
        command: ControlCommand,
        argument: String = "",
        depth: UInt32 = 0,
        rootPath: String = ""
    ) {
        self.requestID = requestID
        self.command = command
        self.argument = argument
        self.depth = depth
        self.rootPath = rootPath
    }
}
