/// A JSON value with its object keys in a chosen order, and its pretty printer: the reports'
/// keys come out in the order their documentation lists them, the same on every run.
indirect enum ReportJSONValue: Sendable, Equatable {
    case object([(String, ReportJSONValue)])
    case array([ReportJSONValue])
    case string(String)
    case int(Int64)
    case double(Double)
    case bool(Bool)
    case null

    /// A string, or null.
    static func string(_ text: String?) -> ReportJSONValue { text.map { .string($0) } ?? .null }
    /// An unsigned number (nanoseconds, pids), or null.
    static func uint(_ value: UInt64?) -> ReportJSONValue { value.map { .int(Int64(clamping: $0)) } ?? .null }

    static func == (lhs: ReportJSONValue, rhs: ReportJSONValue) -> Bool {
        lhs.rendered() == rhs.rendered()
    }

    /// The value as indented JSON (two spaces), ending with a newline.
    func rendered() -> String {
        var text = ""
        write(into: &text, indent: "")
        return text + "\n"
    }

    private func write(into text: inout String, indent: String) {
        switch self {
        case .object(let members):
            guard !members.isEmpty else {
                text += "{}"
                return
            }
            text += "{\n"
            let inner = indent + "  "
            for (offset, (key, value)) in members.enumerated() {
                text += inner
                Self.quote(key, into: &text)
                text += ": "
                value.write(into: &text, indent: inner)
                text += offset == members.count - 1 ? "\n" : ",\n"
            }
            text += indent + "}"
        case .array(let elements):
            guard !elements.isEmpty else {
                text += "[]"
                return
            }
            text += "[\n"
            let inner = indent + "  "
            for (offset, value) in elements.enumerated() {
                text += inner
                value.write(into: &text, indent: inner)
                text += offset == elements.count - 1 ? "\n" : ",\n"
            }
            text += indent + "]"
        case .string(let value):
            Self.quote(value, into: &text)
        case .int(let value):
            text += String(value)
        case .double(let value):
            text += value.isFinite ? "\(value)" : "null"
        case .bool(let value):
            text += value ? "true" : "false"
        case .null:
            text += "null"
        }
    }

    private static func quote(_ value: String, into text: inout String) {
        text += "\""
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "\u{00}"..."\u{1F}", "\u{7F}", "\u{2028}", "\u{2029}":
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
