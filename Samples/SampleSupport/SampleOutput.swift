import NodesDebug

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a sample prints: steps with the node tree, and status lines. Lines are written at once
/// (not buffered), so a test reading the sample's output through a pipe sees each as it happens.
public struct SampleOutput: Sendable {
    /// Whether only errors are printed.
    public let quiet: Bool

    /// An output that prints unless `quiet`.
    public init(quiet: Bool) {
        self.quiet = quiet
    }

    /// Prints a line.
    public func say(_ line: String) {
        guard !quiet else { return }
        Self.write(line + "\n", to: 1)
    }

    /// Prints `== step` and the tracker's current tree, one node a line.
    public func showTree(_ step: String, tracker: NodeTracker = .shared) {
        guard !quiet else { return }
        let text = tracker.snapshot().renderedText()
        Self.write("== \(step)\n" + (text.isEmpty ? "(no nodes)" : text) + "\n", to: 1)
    }

    /// Prints `== step` and the number of nodes, for trees too big to print.
    public func showCount(_ step: String, tracker: NodeTracker = .shared) {
        guard !quiet else { return }
        Self.write("== \(step): \(tracker.snapshot().nodes.count) nodes\n", to: 1)
    }

    /// Prints an error line on standard error, even when quiet.
    public func error(_ line: String) {
        Self.write(line + "\n", to: 2)
    }

    /// Writes `text` to a file descriptor, all of it.
    public static func write(_ text: String, to descriptor: Int32) {
        var text = text
        text.withUTF8 { bytes in
            guard let base = bytes.baseAddress else { return }
            var offset = 0
            while offset < bytes.count {
                let written = Glibc.write(descriptor, base + offset, bytes.count - offset)
                if written <= 0 { return }
                offset += written
            }
        }
    }
}
