/// A place in a host's source code: where a node was attached, or where a test is declared
/// (protocol version 2, `defineSite`).
public struct SourceSite: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The file as the host's compiler saw it (`#filePath`, usually absolute).
    public var file: String
    /// The line, from 1 (0 when unknown).
    public var line: UInt32

    /// Creates a location.
    public init(file: String, line: UInt32) {
        self.file = file
        self.line = line
    }

    /// The file's last path component: `ProfileFlow.swift`.
    public var fileName: String {
        guard let slash = file.lastIndex(of: "/") else { return file }
        return String(file[file.index(after: slash)...])
    }

    /// `ProfileFlow.swift:42`.
    public var description: String { "\(fileName):\(line)" }
}

/// A test that a host ran, under which it attached nodes (protocol version 2, `defineTest`).
public struct TestInfo: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The suite (the declaring type, such as `ProfileTests`), empty for a free test function.
    public var suite: String
    /// The test's name (`closingReleasesTheNode()`, `testClosingReleasesTheNode`).
    public var name: String
    /// Where the test is declared, when the host said.
    public var location: SourceSite?

    /// Creates a test description.
    public init(suite: String, name: String, location: SourceSite?) {
        self.suite = suite
        self.name = name
        self.location = location
    }

    /// `ProfileTests/closingReleasesTheNode()`, or the name alone without a suite.
    public var description: String { suite.isEmpty ? name : "\(suite)/\(name)" }
}
