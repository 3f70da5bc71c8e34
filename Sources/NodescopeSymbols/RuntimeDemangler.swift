#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The Swift runtime's own demangler: the full form (module-qualified, with types), used when no
/// `swift-demangle` is at hand.
enum RuntimeDemangler {
    /// The demangled form of `name`, or nil when it is not a Swift symbol.
    static func demangle(_ name: String) -> String? {
        guard name.hasPrefix("$s") || name.hasPrefix("$S") || name.hasPrefix("_T") else { return nil }
        let utf8 = Array(name.utf8)
        let text = utf8.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { swiftDemangle($0.baseAddress, $0.count, nil, nil, 0) }
        }
        guard let text else { return nil }
        defer { free(text) }
        return String(cString: text)
    }
}

@_silgen_name("swift_demangle")
private func swiftDemangle(
    _ mangledName: UnsafePointer<CChar>?, _ length: Int, _ outputBuffer: UnsafeMutablePointer<CChar>?,
    _ outputBufferSize: UnsafeMutablePointer<Int>?, _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?
