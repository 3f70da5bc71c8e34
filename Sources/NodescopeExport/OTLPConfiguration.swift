/// Where and how to send OTLP (OpenTelemetry's protocol, over HTTP with protobuf bodies): from
/// `--otlp-endpoint` and the SDK's standard environment variables, read the way OpenTelemetry's
/// SDKs read them, for each of the three signals (logs, traces, metrics).
///
/// - `--otlp-endpoint URL` or `OTEL_EXPORTER_OTLP_ENDPOINT`: the base URL; each signal goes to
///   `URL/v1/logs`, `URL/v1/traces`, `URL/v1/metrics`. `OTEL_EXPORTER_OTLP_{LOGS,TRACES,METRICS}_ENDPOINT`
///   is that signal's URL itself (the option wins over every variable).
/// - `OTEL_{LOGS,TRACES,METRICS}_EXPORTER=none`: that signal is not sent (`otlp` is the default).
/// - `OTEL_EXPORTER_OTLP_HEADERS` (and the signal's own `…_HEADERS`): `key=value,…`,
///   percent-encoded, sent with every request (an API key); never printed.
/// - `OTEL_EXPORTER_OTLP_TIMEOUT` (and the signal's own): milliseconds a request may take.
/// - `OTEL_EXPORTER_OTLP_PROTOCOL` (and the signal's own): only `http/protobuf` is spoken.
/// - `OTEL_METRIC_EXPORT_INTERVAL`: milliseconds between the daemon's metric exports (60000).
/// - `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES` (`key=value,…`): the resource's names.
/// - `OTEL_SDK_DISABLED=true`: no export, whatever else is set.
public struct OTLPConfiguration: Sendable, Equatable {
    /// OpenTelemetry's signals, as their URL paths and variables name them.
    public enum Signal: String, Sendable, CaseIterable {
        case logs, traces, metrics

        /// `LOGS`, `TRACES`, `METRICS`: the signal's part of a variable's name.
        var variablePart: String { rawValue.uppercased() }
    }

    /// Where one signal is sent.
    public struct Target: Sendable, Equatable {
        /// The URL the signal is posted to.
        public var url: String
        /// Headers sent with every request.
        public var headers: [Header]
        /// How long one request may take, in milliseconds.
        public var timeoutMilliseconds: Int

        /// A target.
        public init(url: String, headers: [Header], timeoutMilliseconds: Int) {
            self.url = url
            self.headers = headers
            self.timeoutMilliseconds = timeoutMilliseconds
        }
    }

    /// The signals to send, and where.
    public var targets: [Signal: Target]
    /// The service name (`service.name`) when given.
    public var serviceName: String?
    /// `OTEL_RESOURCE_ATTRIBUTES`, in order.
    public var resourceAttributes: [Header]
    /// Milliseconds between two metric exports of the daemon.
    public var metricIntervalMilliseconds: Int

    /// The target of `signal`; nil when it is not sent.
    public func target(_ signal: Signal) -> Target? { targets[signal] }

    /// The signals sent, in the order of ``Signal``.
    public var signals: [Signal] { Signal.allCases.filter { targets[$0] != nil } }

    /// One `key=value` pair.
    public struct Header: Sendable, Equatable {
        /// The key.
        public var name: String
        /// The value.
        public var value: String

        /// Creates a pair.
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Why the settings cannot be used, in words a person can act on.
    public struct Problem: Error, Equatable, CustomStringConvertible {
        /// The message.
        public let description: String
    }

    /// The settings from `endpoint` (the option) and `environment`; nil when no signal has an
    /// endpoint or the SDK is disabled. `defaultTimeoutMilliseconds` applies when no timeout
    /// variable is set (a `check` waits less than a daemon).
    public static func resolve(
        endpoint: String?, environment: [String: String], defaultTimeoutMilliseconds: Int
    ) throws(Problem) -> OTLPConfiguration? {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return nil }
        var targets: [Signal: Target] = [:]
        for signal in Signal.allCases {
            let part = signal.variablePart
            let exporterName = "OTEL_\(part)_EXPORTER"
            if let exporter = nonEmpty(environment[exporterName]) {
                let chosen = exporter.split(separator: ",").map { $0.trimmingSpaces.lowercased() }
                guard chosen.allSatisfy({ $0 == "otlp" || $0 == "none" }) else {
                    throw Problem(description: "\(exporterName)=\(exporter): only otlp or none is understood")
                }
                if !chosen.contains("otlp") { continue }
            }
            let url: String
            if let endpoint {
                url = try signalURL(base: endpoint, signal: signal, what: "--otlp-endpoint")
            } else if let own = nonEmpty(environment["OTEL_EXPORTER_OTLP_\(part)_ENDPOINT"]) {
                try checkURL(own, what: "OTEL_EXPORTER_OTLP_\(part)_ENDPOINT")
                url = own
            } else if let base = nonEmpty(environment["OTEL_EXPORTER_OTLP_ENDPOINT"]) {
                url = try signalURL(base: base, signal: signal, what: "OTEL_EXPORTER_OTLP_ENDPOINT")
            } else {
                continue
            }
            for name in ["OTEL_EXPORTER_OTLP_\(part)_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"] {
                guard let value = nonEmpty(environment[name]) else { continue }
                guard value == "http/protobuf" else {
                    throw Problem(description: "\(name)=\(value): only http/protobuf is spoken (OTLP over HTTP with protobuf bodies)")
                }
                break
            }
            var timeout = defaultTimeoutMilliseconds
            for name in ["OTEL_EXPORTER_OTLP_\(part)_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"] {
                guard let value = nonEmpty(environment[name]) else { continue }
                timeout = try milliseconds(value, name: name)
                break
            }
            var headers: [Header] = []
            for name in ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_\(part)_HEADERS"] {
                guard let value = nonEmpty(environment[name]) else { continue }
                // The values may be secrets: the message names the variable, never what it holds.
                guard let pairs = pairs(value), pairs.allSatisfy({ isHeaderName($0.name) && isHeaderValue($0.value) }) else {
                    throw Problem(description: "\(name): not a list of key=value pairs with header names and values (percent-encoded)")
                }
                for pair in pairs {
                    headers.removeAll { $0.name.lowercased() == pair.name.lowercased() }
                    headers.append(pair)
                }
            }
            targets[signal] = Target(url: url, headers: headers, timeoutMilliseconds: timeout)
        }
        guard !targets.isEmpty else { return nil }
        var attributes: [Header] = []
        if let value = nonEmpty(environment["OTEL_RESOURCE_ATTRIBUTES"]) {
            guard let pairs = pairs(value) else {
                throw Problem(description: "OTEL_RESOURCE_ATTRIBUTES=\(value): not a list of key=value pairs (percent-encoded)")
            }
            attributes = pairs
        }
        var interval = 60_000
        if let value = nonEmpty(environment["OTEL_METRIC_EXPORT_INTERVAL"]) {
            interval = try milliseconds(value, name: "OTEL_METRIC_EXPORT_INTERVAL")
        }
        return OTLPConfiguration(
            targets: targets, serviceName: nonEmpty(environment["OTEL_SERVICE_NAME"]), resourceAttributes: attributes,
            metricIntervalMilliseconds: interval)
    }

    /// A whole number of milliseconds from 1 to 600000 (ten minutes).
    private static func milliseconds(_ value: String, name: String) throws(Problem) -> Int {
        guard let milliseconds = Int(value), (1...600_000).contains(milliseconds) else {
            throw Problem(description: "\(name)=\(value): give milliseconds, a whole number from 1 to 600000")
        }
        return milliseconds
    }

    /// `base` with `/v1/<signal>` appended, as the SDKs do for the endpoint of every signal.
    private static func signalURL(base: String, signal: Signal, what: String) throws(Problem) -> String {
        try checkURL(base, what: what)
        return (base.hasSuffix("/") ? String(base.dropLast()) : base) + "/v1/" + signal.rawValue
    }

    /// An http or https URL with a host, and nothing that would let it say more than a URL.
    private static func checkURL(_ url: String, what: String) throws(Problem) {
        let lower = url.lowercased()
        guard let scheme = ["http://", "https://"].first(where: { lower.hasPrefix($0) }) else {
            throw Problem(description: "\(what) \(url): give an http:// or https:// URL, as http://localhost:4318")
        }
        let rest = url.dropFirst(scheme.count)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@") else {
            throw Problem(description: "\(what) \(url): give a host (and port) after \(scheme), with no user or password")
        }
        guard url.utf8.count <= 2048, url.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
            throw Problem(description: "\(what): the URL is longer than 2048 bytes or holds spaces or control characters")
        }
    }

    /// `key=value,…` with both sides percent-decoded and trimmed; nil when malformed.
    static func pairs(_ text: String) -> [Header]? {
        var result: [Header] = []
        for item in text.split(separator: ",", omittingEmptySubsequences: true) {
            let trimmed = item.trimmingSpaces
            if trimmed.isEmpty { continue }
            guard let equals = trimmed.firstIndex(of: "="),
                let name = percentDecoded(trimmed[..<equals].trimmingSpaces),
                let value = percentDecoded(trimmed[trimmed.index(after: equals)...].trimmingSpaces), !name.isEmpty
            else { return nil }
            result.append(Header(name: name, value: value))
        }
        return result
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var index = text.utf8.startIndex
        let utf8 = text.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%") {
                let first = utf8.index(after: index)
                guard first < utf8.endIndex else { return nil }
                let second = utf8.index(after: first)
                guard second < utf8.endIndex, let high = hexValue(utf8[first]), let low = hexValue(utf8[second]) else {
                    return nil
                }
                bytes.append(high << 4 | low)
                index = utf8.index(after: second)
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// An HTTP field name: a token.
    private static func isHeaderName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256
            && name.unicodeScalars.allSatisfy {
                $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0))
            }
    }

    /// An HTTP field value: visible characters and spaces, no line breaks.
    private static func isHeaderValue(_ value: String) -> Bool {
        value.utf8.count <= 8192 && value.unicodeScalars.allSatisfy { $0 == " " || $0 == "\t" || ($0.value > 0x20 && $0.value != 0x7F) }
    }

    private static func nonEmpty(_ value: String?) -> String? {
        guard let value, !value.isEmpty else { return nil }
        return value
    }
}

extension StringProtocol {
    fileprivate var trimmingSpaces: Substring {
        let text = self[...]
        guard let first = text.firstIndex(where: { $0 != " " && $0 != "\t" }),
            let last = text.lastIndex(where: { $0 != " " && $0 != "\t" })
        else { return Substring("") }
        return Substring(text[first...last])
    }
}
