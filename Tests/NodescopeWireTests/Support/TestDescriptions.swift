import NodescopeWire
import Testing

// Keeps parameterized test names short: a 64 KB body would otherwise be printed in full.
extension WireMessage: CustomTestStringConvertible {
    public var testDescription: String {
        let bytes = FrameEncoder.encoded(self)
        return "\(frameType) (\(bytes.count) bytes)"
    }
}
