/// Makes user strings safe inside Graphviz labels, HTML-like or plain.
///
/// Names arrive from other processes' sockets, so any string may hold markup, quotes, control
/// characters or entity look-alikes. Each of those would otherwise break the DOT text, the HTML
/// label parser, or the XML that Graphviz writes.
enum LabelText {
    /// `text` as character data for an HTML-like label, on one line.
    static func html(_ text: String) -> String {
        escape(text, quoted: false)
    }

    /// `text` for the inside of a DOT quoted string used as a plain label, on one line: quotes
    /// and backslashes escaped, so that Graphviz's `\N`, `\G`, `\l` and friends stay literal.
    static func quoted(_ text: String) -> String {
        escape(text, quoted: true)
    }

    private static func escape(_ text: String, quoted: Bool) -> String {
        if text.utf8.allSatisfy(isPlain) { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count {
            let scalar = scalars[index]
            switch scalar {
            case "&":
                // Graphviz decodes entities even in plain labels, and its SVG writer passes
                // "&name;" and "&#123;" through unescaped, which could produce an undefined
                // entity or an invalid character in the SVG. Such sequences keep their look with
                // a full-width ampersand instead.
                out += startsEntity(scalars, at: index) ? "\u{FF06}" : quoted ? "&" : "&amp;"
            case "<": out += quoted ? "<" : "&lt;"
            case ">": out += quoted ? ">" : "&gt;"
            case "\"": out += quoted ? "\\\"" : "&quot;"
            case "'": out += quoted ? "'" : "&#39;"
            case "\\":
                if quoted {
                    out += "\\\\"
                } else {
                    // HTML-like labels have no escape for a backslash, yet Graphviz still replaces
                    // \N, \G, \E, \H, \T and \L in them; a zero-width space keeps the text as is.
                    out += "\\"
                    if index + 1 < scalars.count, isASCIILetter(scalars[index + 1]) {
                        out += "\u{200B}"
                    }
                }
            case "\n", "\r", "\t": out += " "
            default:
                out.unicodeScalars.append(isDrawable(scalar) ? scalar : "\u{FFFD}")
            }
            index += 1
        }
        return out
    }

    /// Whether `byte` is printable ASCII that means nothing special in DOT, HTML or XML.
    private static func isPlain(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "\""), UInt8(ascii: "'"),
            UInt8(ascii: "\\"):
            false
        case 0x20...0x7E: true
        default: false
        }
    }

    private static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }

    /// Whether `scalar` may appear in XML 1.0 text and is not a control character.
    private static func isDrawable(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0xFFFE, 0xFFFF: false
        default: true
        }
    }

    /// Whether `&` at `index` begins something an XML writer could take for an entity.
    private static func startsEntity(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        var next = index + 1
        while next < scalars.count {
            let scalar = scalars[next]
            if scalar == ";" { return next > index + 1 }
            let isNameCharacter =
                scalar == "#"
                || ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
                || ("0"..."9").contains(scalar)
            if !isNameCharacter { return false }
            next += 1
        }
        return false
    }

    /// How wide `text` is in multiples of its font size, as a rough average for sans-serif faces.
    ///
    /// Wide East Asian characters and emoji count double. The estimate errs on the wide side so
    /// that pinned boxes are rarely narrower than the text Graphviz measures.
    static func estimatedWidth(of text: String, bold: Bool) -> Double {
        var units = 0.0
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x300...0x36F, 0x200B...0x200F, 0xFE00...0xFE0F: continue  // combining, zero-width
            case 0x1100...: units += 1.2
            case 0x20: units += 0.35
            case 0x69, 0x6C, 0x2E, 0x2C, 0x3A, 0x3B, 0x7C, 0x21, 0x27, 0x49, 0x6A: units += 0.32  // i l . , : ; | ! ' I j
            case 0x6D, 0x77, 0x4D, 0x57: units += 0.92  // m w M W
            case 0x41...0x5A: units += 0.72  // other capitals
            default: units += 0.62
            }
        }
        return units * (bold ? 1.1 : 1.0)
    }
}
