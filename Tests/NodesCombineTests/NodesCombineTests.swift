import Nodes
import NodesCombine
import Testing

/// What `NodesCombine` adds to OpenCombine for code written for Combine and the Nodes framework.
@MainActor @Suite struct NodesCombineTests {
    final class CountObserver: StateObserver {
        private(set) var states: [Int] = []
        func update(with state: Int) { states.append(state) }
    }

    struct Doubling: Transform {
        func callAsFunction(_ value: Int) -> String { "\(value * 2)" }
    }

    final class SubscribingContext: AbstractContext<AnyCancellable> {}

    @Test func anObserverTakesEveryStateAPublisherEmitsUntilCancelled() {
        let observer = CountObserver()
        let subject = PassthroughSubject<Int, Never>()
        let cancellable = observer.observe(subject)
        subject.send(1)
        subject.send(2)
        cancellable.cancel()
        subject.send(3)
        #expect(observer.states == [1, 2])
    }

    @Test func aPublisherMapsThroughATransform() {
        var outputs: [String] = []
        let cancellable = [1, 2].publisher.map(Doubling()).sink { outputs.append($0) }
        cancellable.cancel()
        #expect(outputs == ["2", "4"])
    }

    @Test func cancelAllCancelsAndForgetsUnlessKeeping() {
        var cancelled = 0
        var kept: Set<AnyCancellable> = [AnyCancellable { cancelled += 1 }, AnyCancellable { cancelled += 1 }]
        kept.cancelAll(keepingCancellables: true)
        #expect(cancelled == 2)
        #expect(kept.count == 2)
        var forgotten: Set<AnyCancellable> = [AnyCancellable { cancelled += 1 }]
        forgotten.cancelAll()
        #expect(cancelled == 3)
        #expect(forgotten.isEmpty)
    }

    @Test func aContextCancelsItsCombineSubscriptionsWhenItResignsActive() {
        let context = SubscribingContext(workers: [])
        let subject = PassthroughSubject<Int, Never>()
        var received: [Int] = []
        context.activate()
        subject.sink { received.append($0) }.store(in: &context.cancellables)
        subject.send(1)
        context.deactivate()
        subject.send(2)
        #expect(received == [1])
        #expect(context.cancellables.isEmpty)
    }
}
