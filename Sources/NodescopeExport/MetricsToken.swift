#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The secret a scraper must send (`Authorization: Bearer …`) when the daemon is given
/// `--metrics-token-file`: read once at start from a file that only the daemon's user can read,
/// as Prometheus reads its `credentials_file`.
package struct MetricsToken: Sendable, Equatable {
    /// Why a token file is refused.
    package struct Refusal: Error, CustomStringConvertible {
        package let description: String
    }

    /// The secret.
    let secret: [UInt8]

    /// The fewest characters a token may have.
    package static let minimumLength = 16
    /// The most bytes a token file may have.
    static let maximumFileBytes = 4_096

    /// A token from its text (surrounding whitespace and a final line break left out).
    package init(_ text: String) throws(Refusal) {
        let trimmed = text.utf8.drop { Self.isSpace($0) }.reversed().drop { Self.isSpace($0) }.reversed()
        guard trimmed.count >= Self.minimumLength else {
            throw Refusal(description: "the token has \(trimmed.count) characters; it needs at least \(Self.minimumLength)")
        }
        guard trimmed.allSatisfy({ $0 > 32 && $0 < 127 }) else {
            throw Refusal(description: "the token must be printable ASCII without spaces")
        }
        secret = Array(trimmed)
    }

    /// The token in `path`: a regular file of this user that neither its group nor others may
    /// read or write (mode 600 or 400), of at most 4 KiB.
    package init(contentsOfFile path: String) throws(Refusal) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard descriptor >= 0 else {
            throw Refusal(description: "cannot open --metrics-token-file \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else {
            throw Refusal(description: "cannot read --metrics-token-file \(path): \(String(cString: strerror(errno)))")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw Refusal(description: "--metrics-token-file \(path) is not a regular file")
        }
        guard status.st_uid == getuid() else {
            throw Refusal(description: "--metrics-token-file \(path) belongs to another user (uid \(status.st_uid))")
        }
        guard status.st_mode & 0o077 == 0 else {
            let mode = String(status.st_mode & 0o777, radix: 8)
            throw Refusal(description: "--metrics-token-file \(path) is readable or writable by others (mode \(mode)); chmod 600 it")
        }
        var bytes = [UInt8](repeating: 0, count: Self.maximumFileBytes + 1)
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else {
                throw Refusal(description: "cannot read --metrics-token-file \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { break }
            filled += count
        }
        guard filled <= Self.maximumFileBytes else {
            throw Refusal(description: "--metrics-token-file \(path) is larger than \(Self.maximumFileBytes) bytes")
        }
        do {
            try self.init(String(decoding: bytes[..<filled], as: UTF8.self))
        } catch {
            throw Refusal(description: "--metrics-token-file \(path): \(error.description)")
        }
    }

    /// Whether an `Authorization` header carries this token, compared in a time that does not
    /// depend on where the first difference is.
    package func admits(authorization: String?) -> Bool {
        guard let authorization else { return false }
        let given = Array(authorization.utf8)
        let prefix = Array("Bearer ".utf8)
        guard given.count == prefix.count + secret.count else { return false }
        var difference: UInt8 = 0
        for (index, byte) in prefix.enumerated() {
            // The scheme is case-insensitive.
            difference |= (given[index] | 0x20) ^ (byte | 0x20)
        }
        for (index, byte) in secret.enumerated() { difference |= given[prefix.count + index] ^ byte }
        return difference == 0
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 32 || byte == 9 || byte == 10 || byte == 13 }
}
