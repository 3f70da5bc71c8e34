/// A stream that replays its latest value to each new subscriber, then sends every new one:
/// how RIBs pass state such as the rider's profile down the tree (a tiny stand-in for Rx).
final class ReplayStream<Element> {
    private var latest: Element
    private var observers: [(id: Int, onNext: (Element) -> Void)] = []
    private var nextID = 0

    init(_ initial: Element) {
        latest = initial
    }

    /// The latest value.
    var value: Element { latest }

    /// Sends a new value to every subscriber.
    func onNext(_ element: Element) {
        latest = element
        for observer in observers { observer.onNext(element) }
    }

    /// Calls `onNext` with the latest value now and with every later one, until the returned
    /// subscription is disposed. The stream keeps `onNext` (and what it captures) until then.
    func subscribe(_ onNext: @escaping (Element) -> Void) -> Disposable {
        nextID += 1
        let id = nextID
        observers.append((id, onNext))
        onNext(latest)
        return Disposable { [weak self] in self?.observers.removeAll { $0.id == id } }
    }
}

/// A subscription. As in Rx, it is not disposed when it is dropped: only ``dispose()`` ends it.
final class Disposable {
    private var action: (() -> Void)?

    init(_ action: @escaping () -> Void) {
        self.action = action
    }

    func dispose() {
        let action = self.action
        self.action = nil
        action?()
    }
}

/// Subscriptions disposed together.
final class DisposeBag {
    private var disposables: [Disposable] = []

    func insert(_ disposable: Disposable) {
        disposables.append(disposable)
    }

    func dispose() {
        disposables.forEach { $0.dispose() }
        disposables.removeAll()
    }
}
