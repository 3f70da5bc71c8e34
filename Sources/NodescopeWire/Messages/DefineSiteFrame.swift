/// Interns a source location (version 2): a file and a line where nodes are attached or tests
/// are declared. Later frames on the same connection refer to it by ``siteID``.
///
/// Wire layout (type `0x1C`): u32 siteID, u32 fileStringID, u32 line. The ids are never 0.
/// The file is an interned string (``DefineStringFrame``): the path as the host's compiler saw
/// it (`#filePath`), or a shorter form (`#fileID`) when the host has nothing better.
public struct DefineSiteFrame: Equatable, Sendable {
    /// The id, unique per connection, at least 1.
    public var siteID: UInt32
    /// The interned file path, at least 1.
    public var fileStringID: UInt32
    /// The line, from 1 (0 when unknown).
    public var line: UInt32

    /// Creates a site definition.
    public init(siteID: UInt32, fileStringID: UInt32, line: UInt32) {
        self.siteID = siteID
        self.fileStringID = fileStringID
        self.line = line
    }
}
