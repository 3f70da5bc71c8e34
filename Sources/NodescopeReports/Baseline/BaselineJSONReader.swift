/// A JSON value read from a baseline file, with where it starts (line and column, from 1), so
/// that every complaint about a baseline can name its place.
struct BaselineJSONValue {
    /// What the value is.
    enum Kind {
        case object([Member])
        case array([BaselineJSONValue])
        case string(String)
        case number(Double)
        case bool(Bool)
        case null
    }

    /// One member of an object, with the position of its key.
    struct Member {
        var key: String
        var line: Int
        var column: Int
        var value: BaselineJSONValue
    }

    var kind: Kind
    var line: Int
    var column: Int

    /// `an object`, `a string` …: for messages.
    var kindName: String {
        switch kind {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "true or false"
        case .null: "null"
        }
    }
}

/// A syntax or content error in a baseline file, at a line and column.
struct BaselineError: Error, Sendable {
    var line: Int
    var column: Int
    var message: String
}

/// A strict JSON reader (RFC 8259: no comments, no trailing commas, no duplicate keys) that keeps
/// positions. Foundation's reader neither rejects trailing commas nor says on which line it
/// stopped, and a baseline is a file people edit by hand.
struct BaselineJSONReader {
    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    private init(_ bytes: [UInt8]) {
        self.bytes = bytes
        // A UTF-8 byte order mark is allowed and skipped.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) {
            index = 3
            lineStart = 3
        }
    }

    /// Reads one JSON document.
    static func read(_ bytes: [UInt8]) throws(BaselineError) -> BaselineJSONValue {
        var reader = BaselineJSONReader(bytes)
        reader.skipSpace()
        guard reader.index < reader.bytes.count else { throw reader.error("the file is empty; a baseline is a JSON object") }
        let value = try reader.value(depth: 0)
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw reader.error("unexpected text after the end of the JSON document") }
        return value
    }

    private var column: Int { index - lineStart + 1 }

    private func error(_ message: String) -> BaselineError {
        BaselineError(line: line, column: column, message: message)
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0D: index += 1
            case 0x0A:
                index += 1
                line += 1
                lineStart = index
            default: return
            }
        }
    }

    private func describeHere() -> String {
        guard index < bytes.count else { return "the end of the file" }
        let byte = bytes[index]
        return byte >= 0x21 && byte < 0x7F ? "'\(Character(UnicodeScalar(byte)))'" : "byte 0x\(String(byte, radix: 16))"
    }

    private mutating func value(depth: Int) throws(BaselineError) -> BaselineJSONValue {
        guard depth < 64 else { throw error("the JSON is nested too deeply") }
        let (startLine, startColumn) = (line, column)
        guard index < bytes.count else { throw error("expected a value, found the end of the file") }
        let kind: BaselineJSONValue.Kind
        switch bytes[index] {
        case UInt8(ascii: "{"): kind = .object(try object(depth: depth))
        case UInt8(ascii: "["): kind = .array(try array(depth: depth))
        case UInt8(ascii: "\""): kind = .string(try string())
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): kind = .number(try number())
        case UInt8(ascii: "t"):
            try literal("true")
            kind = .bool(true)
        case UInt8(ascii: "f"):
            try literal("false")
            kind = .bool(false)
        case UInt8(ascii: "n"):
            try literal("null")
            kind = .null
        default: throw error("expected a value, found \(describeHere())")
        }
        return BaselineJSONValue(kind: kind, line: startLine, column: startColumn)
    }

    private mutating func literal(_ word: String) throws(BaselineError) {
        let expected = Array(word.utf8)
        guard bytes[index...].starts(with: expected) else { throw error("expected a value, found \(describeHere())") }
        index += expected.count
    }

    private mutating func object(depth: Int) throws(BaselineError) -> [BaselineJSONValue.Member] {
        index += 1
        var members: [BaselineJSONValue.Member] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return members
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else {
                throw error("expected a key in double quotes, found \(describeHere())")
            }
            let (keyLine, keyColumn) = (line, column)
            let key = try string()
            if members.contains(where: { $0.key == key }) {
                throw BaselineError(line: keyLine, column: keyColumn, message: "the key \"\(key)\" appears twice in this object")
            }
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after the key, found \(describeHere())")
            }
            index += 1
            skipSpace()
            members.append(.init(key: key, line: keyLine, column: keyColumn, value: try value(depth: depth + 1)))
            skipSpace()
            guard index < bytes.count else { throw error("the object is not closed: expected ',' or '}'") }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return members
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or '}', found \(describeHere())") }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "}") { throw error("a trailing comma before '}' is not allowed in JSON") }
        }
    }

    private mutating func array(depth: Int) throws(BaselineError) -> [BaselineJSONValue] {
        index += 1
        var elements: [BaselineJSONValue] = []
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            skipSpace()
            elements.append(try value(depth: depth + 1))
            skipSpace()
            guard index < bytes.count else { throw error("the array is not closed: expected ',' or ']'") }
            if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            }
            guard bytes[index] == UInt8(ascii: ",") else { throw error("expected ',' or ']', found \(describeHere())") }
            index += 1
            skipSpace()
            if index < bytes.count, bytes[index] == UInt8(ascii: "]") { throw error("a trailing comma before ']' is not allowed in JSON") }
        }
    }

    private mutating func string() throws(BaselineError) -> String {
        index += 1
        var scalars = String.UnicodeScalarView()
        var raw: [UInt8] = []
        func flushRaw() throws(BaselineError) {
            guard !raw.isEmpty else { return }
            guard let text = String(validating: raw, as: UTF8.self) else {
                throw error("the string is not valid UTF-8")
            }
            scalars.append(contentsOf: text.unicodeScalars)
            raw.removeAll()
        }
        while true {
            guard index < bytes.count else { throw error("the string is not closed: expected '\"'") }
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                try flushRaw()
                return String(scalars)
            case UInt8(ascii: "\\"):
                try flushRaw()
                index += 1
                guard index < bytes.count else { throw error("the string ends inside an escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try unicodeEscape())
                default:
                    index -= 1
                    throw error("unknown escape \\\(describeHere()) in a string")
                }
            case 0x00..<0x20:
                throw error(
                    byte == 0x0A ? "the string is not closed before the end of the line" : "a control character in a string must be escaped"
                )
            default:
                raw.append(byte)
                index += 1
            }
        }
    }

    private mutating func hexQuad() throws(BaselineError) -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw error("\\u must be followed by four hexadecimal digits")
        }
        index += 4
        return value
    }

    private mutating func unicodeEscape() throws(BaselineError) -> Unicode.Scalar {
        let first = try hexQuad()
        if (0xD800..<0xDC00).contains(first) {
            guard bytes[index...].starts(with: Array("\\u".utf8)) else {
                throw error("a high surrogate \\u escape must be followed by a low one")
            }
            index += 2
            let second = try hexQuad()
            guard (0xDC00..<0xE000).contains(second) else { throw error("a high surrogate \\u escape must be followed by a low one") }
            return Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00))!
        }
        guard let scalar = Unicode.Scalar(first) else { throw error("\\u\(String(first, radix: 16)) is a lone surrogate") }
        return scalar
    }

    private mutating func number() throws(BaselineError) -> Double {
        let start = index
        func digits() -> Int {
            let from = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            return index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        guard digits() > 0 else { throw error("expected a digit, found \(describeHere())") }
        if bytes[integerStart] == UInt8(ascii: "0"), index - integerStart > 1 {
            throw BaselineError(line: line, column: integerStart - lineStart + 1, message: "a number must not start with 0")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { throw error("expected a digit after '.', found \(describeHere())") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { throw error("expected a digit in the exponent, found \(describeHere())") }
        }
        return Double(String(decoding: bytes[start..<index], as: UTF8.self)) ?? .nan
    }
}
