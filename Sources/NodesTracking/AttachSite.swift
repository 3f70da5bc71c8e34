import Synchronization

/// Where in the source a node was attached: a file and a line, captured by the compiler (or,
/// for a test's own location, given by the test framework).
///
/// The runtime's attach calls and the generic tracking API take `file: StaticString = #filePath`
/// and `line: UInt = #line` as default arguments, so the site costs nothing at run time: a
/// pointer to a string in the binary and a number. The agent sends each distinct site once per
/// connection (protocol version 2, `defineSite`), then refers to it by id.
public struct AttachSite: Sendable, Equatable, CustomStringConvertible {
    /// The file, as the compiler saw it (`#filePath`: usually an absolute path).
    public let file: StaticString
    /// The line, from 1.
    public let line: UInt32

    /// The site of the caller, or of the given file and line.
    public init(file: StaticString = #filePath, line: UInt = #line) {
        self.file = file
        self.line = UInt32(clamping: line)
        self.dynamicPath = 0
    }

    /// The site of a file named at run time (a test framework's source location); its text
    /// is kept once per process and path, so this one costs a lookup under a lock.
    public init(filePath: String, line: Int) {
        self.file = ""
        self.line = UInt32(clamping: line)
        self.dynamicPath = DynamicPaths.shared.number(of: filePath)
    }

    /// For a site made at run time: its file's path's number in ``DynamicPaths`` (0: none).
    /// A number, not the string, so that a site is plain data, copied without reference
    /// counting on its way from the runtime's attach call to the tracker's log.
    private let dynamicPath: UInt32

    /// The file's path as a string.
    public var filePath: String {
        dynamicPath == 0 ? file.description : DynamicPaths.shared.path(numbered: dynamicPath)
    }

    /// The file's last path component: `ProfileFlow.swift`.
    public var fileName: String {
        let path = filePath
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// `ProfileFlow.swift:42`.
    public var description: String { "\(fileName):\(line)" }

    /// Two words equal for equal sites, or nil for a file literal that is not a pointer: what a
    /// cache compares without hashing. A literal gives its address and the line; a path made at
    /// run time its number and the line with bit 32 set, so the two kinds never meet.
    package var words: (UInt, UInt)? {
        if dynamicPath != 0 { return (UInt(dynamicPath), UInt(line) | 1 << 32) }
        guard file.hasPointerRepresentation else { return nil }
        return (UInt(bitPattern: file.utf8Start), UInt(line))
    }

    /// A key that identifies the site without reading its text: the address of the file's
    /// static string (every use of one `#filePath` literal shares it) and the line.
    package var internKey: SiteKey {
        if dynamicPath != 0 { return SiteKey(address: 0, line: line, text: filePath) }
        return file.hasPointerRepresentation
            ? SiteKey(address: UInt(bitPattern: file.utf8Start), line: line, text: nil)
            : SiteKey(address: 0, line: line, text: file.description)
    }

    public static func == (lhs: AttachSite, rhs: AttachSite) -> Bool {
        lhs.line == rhs.line && lhs.filePath == rhs.filePath
    }
}

/// The identity of an ``AttachSite`` for interning.
package struct SiteKey: Hashable {
    var address: UInt
    var line: UInt32
    /// Only for a file literal that is not a pointer (never the case for `#filePath`).
    var text: String?
}

/// The file paths of the sites made at run time (``AttachSite/init(filePath:line:)``), each
/// kept once, numbered from 1. There are as many as a test run's source files.
final class DynamicPaths: Sendable {
    static let shared = DynamicPaths()

    private struct Table {
        var paths: [String] = []
        var numbers: [String: UInt32] = [:]
    }

    private let table = Mutex(Table())

    /// The most paths kept: a process making sites from more distinct paths than this (none
    /// does) shares the last number among the rest, whose sites then read that path.
    static let capacity = 1 << 20

    func number(of path: String) -> UInt32 {
        table.withLock { table in
            if let number = table.numbers[path] { return number }
            guard table.paths.count < Self.capacity else { return UInt32(table.paths.count) }
            table.paths.append(path)
            let number = UInt32(table.paths.count)
            table.numbers[path] = number
            return number
        }
    }

    func path(numbered number: UInt32) -> String {
        table.withLock { table in
            let index = Int(number) - 1
            return table.paths.indices.contains(index) ? table.paths[index] : ""
        }
    }
}
