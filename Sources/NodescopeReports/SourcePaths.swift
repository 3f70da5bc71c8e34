import NodescopeCollector

/// Source paths as reports show them: relative to the repository's root when they are under it.
package enum SourcePaths {
    /// `path` relative to `root` (no leading `/`), or nil when it is not under `root`.
    package static func relative(_ path: String, to root: String?) -> String? {
        guard let root, !root.isEmpty, path.hasPrefix("/") else { return nil }
        let base = root.hasSuffix("/") ? root : root + "/"
        guard path.hasPrefix(base), path.count > base.count else { return nil }
        return String(path.dropFirst(base.count))
    }

    /// `Sources/App/ProfileFlow.swift:42` (relative to the root), or `ProfileFlow.swift:42`
    /// when the file is not under it.
    package static func text(_ site: SourceSite, root: String?) -> String {
        "\(relative(site.file, to: root) ?? site.fileName):\(site.line)"
    }

    /// A `file://` URI of an absolute path, each byte outside the unreserved set and `/`
    /// percent-encoded (RFC 3986).
    package static func fileURI(_ path: String) -> String {
        "file://" + percentEncoded(path)
    }

    /// `path` with every byte that is not unreserved or `/` percent-encoded.
    package static func percentEncoded(_ path: String) -> String {
        var result = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "/"):
                result.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                result += "%" + String(hex[Int(byte >> 4)]) + String(hex[Int(byte & 0xF)])
            }
        }
        return result
    }
}
