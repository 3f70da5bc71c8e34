import Nodes
import OpenCombine

extension Publishers.Map {
    /// A map of `upstream` through `transform`.
    public init<T: Transform>(upstream: Upstream, transform: T) where T.Input == Upstream.Output, T.Output == Output {
        self.init(upstream: upstream) { transform($0) }
    }
}

extension Publisher {
    /// Maps every output through `transform`: `statePublisher.map(viewStateTransform)`.
    public func map<T: Transform>(_ transform: T) -> Publishers.Map<Self, T.Output> where T.Input == Output {
        Publishers.Map(upstream: self, transform: transform)
    }
}
