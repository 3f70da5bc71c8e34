/// Where `daemon --metrics` listens: `PORT` (on 127.0.0.1), `HOST:PORT` or `[IPv6]:PORT`.
/// Loopback unless another address is named; port 0 picks a free one (the daemon logs it).
package struct MetricsAddress: Sendable, Equatable, CustomStringConvertible {
    /// The address to bind, without brackets.
    package var host: String
    /// The port; 0 picks a free one.
    package var port: Int

    /// An address.
    package init(host: String = "127.0.0.1", port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `9464`, `127.0.0.1:9464`, `localhost:9464`, `[::1]:9464` or `0.0.0.0:9464`; nil with
    /// anything else (a port out of 0…65535, an empty host, a host with spaces or a path).
    package init?(parsing argument: String) {
        var host = "127.0.0.1"
        var portText = Substring(argument)
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { return nil }
            host = String(argument[argument.index(after: argument.startIndex)..<close])
            let rest = argument[argument.index(after: close)...]
            guard rest.hasPrefix(":") else { return nil }
            portText = rest.dropFirst()
        } else if let colon = argument.lastIndex(of: ":") {
            host = String(argument[..<colon])
            portText = argument[argument.index(after: colon)...]
            // An IPv6 address needs brackets, so that its last group is not read as the port.
            guard !host.contains(":") else { return nil }
        }
        guard !host.isEmpty, host.utf8.count <= 253,
            host.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || "0123456789.-:_".unicodeScalars.contains($0)) }),
            !portText.isEmpty, portText.count <= 5, portText.allSatisfy(\.isNumber), let port = Int(portText), port <= 65_535
        else { return nil }
        self.host = host
        self.port = port
    }

    /// Whether only this machine can reach it.
    package var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    /// Whether it listens on every address (`0.0.0.0`, `::`).
    package var isWildcard: Bool { host == "0.0.0.0" || host == "::" }

    /// `HOST:PORT`, with brackets around an IPv6 address.
    package var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
