import Nodes
import OpenCombine

// Combine's cancellable is a Nodes cancellable: contexts and workers are written
// `AbstractContext<AnyCancellable>`, as with the framework on Apple platforms.
extension AnyCancellable: Nodes.Cancellable {}

extension Set where Element == AnyCancellable {
    /// Cancels every element and, unless `keepCancellables`, forgets them and watches each for
    /// release (`LeakDetector.detect(_:delay:)`).
    public mutating func cancelAll(keepingCancellables keepCancellables: Bool = false) {
        for cancellable in self {
            cancellable.cancel()
            if !keepCancellables { LeakDetector.detect(cancellable) }
        }
        if !keepCancellables { removeAll() }
    }
}
