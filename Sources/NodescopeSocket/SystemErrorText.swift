#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A system error number in words a person reads: `No such file or directory (errno 2)`.
package enum SystemErrorText {
    /// The C library's text for `code`, with the number for searching.
    package static func describe(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "errno \(code)" }
        return "\(String(cString: text)) (errno \(code))"
    }
}
