/// Text from a host (process, node, type and role names), made safe to print on a terminal.
///
/// A host chooses these strings; printed raw, an ESC sequence could clear the screen or retitle
/// the terminal, and a newline could fake a row. Every control character is shown as a visible
/// escape instead: `\e` (ESC), `\n`, `\r`, `\t`, `\x07` (other C0 and DEL), `\u{9b}` (C1), and
/// the Unicode line separators and bidirectional overrides likewise. Everything else is kept.
public enum VisibleText {
    /// `text` with every control character escaped visibly.
    public static func escaped(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            switch scalar.value {
            case 0x1B: result += "\\e"
            case 0x0A: result += "\\n"
            case 0x0D: result += "\\r"
            case 0x09: result += "\\t"
            case 0x00..<0x20, 0x7F: result += "\\x" + hex(scalar.value, width: 2)
            default: result += "\\u{" + String(scalar.value, radix: 16) + "}"
            }
        }
        return result
    }

    /// C0, DEL, C1, the line and paragraph separators, and the bidirectional controls.
    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00..<0x20, 0x7F..<0xA0: true
        case 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func hex(_ value: UInt32, width: Int) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
