/// Text for an XML 1.0 document (the JUnit report, the SVG timeline, the web view's HTML
/// redirect): one set of rules for attribute values and element content. Markup characters
/// become entities, and the characters XML 1.0 cannot hold at all (the C0 controls but tab,
/// line feed and carriage return; U+FFFE; U+FFFF) become U+FFFD.
package enum XMLText {
    /// `text` escaped. In an attribute value (`attribute`, the default) tab, line feed and
    /// carriage return become character references, which a parser keeps (it would turn the raw
    /// characters into spaces); in element content they stay as they are.
    package static func escaped(_ text: String, attribute: Bool = true) -> String {
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&apos;"
            case "\n", "\t", "\r": result += attribute ? "&#\(scalar.value);" : String(scalar)
            case "\u{00}"..."\u{1F}", "\u{FFFE}", "\u{FFFF}": result += "\u{FFFD}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }
}
