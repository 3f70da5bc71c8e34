/// A publish–subscribe stream of a module's events (a tiny stand-in for an RxSwift subject).
/// The stream keeps each handler, and what the handler captures, until its subscription is
/// cancelled or the stream itself goes away.
final class EventStream {
    private var handlers: [(id: Int, handle: (any ModuleEvent) -> Void)] = []
    private var nextID = 0

    func send(_ event: any ModuleEvent) {
        for handler in handlers { handler.handle(event) }
    }

    @discardableResult
    func subscribe(_ handle: @escaping (any ModuleEvent) -> Void) -> Subscription {
        nextID += 1
        let id = nextID
        handlers.append((id, handle))
        return Subscription { [weak self] in self?.handlers.removeAll { $0.id == id } }
    }
}

/// A subscription to an ``EventStream``; only ``cancel()`` ends it.
final class Subscription {
    private var onCancel: (() -> Void)?
    init(_ onCancel: @escaping () -> Void) { self.onCancel = onCancel }

    func cancel() {
        onCancel?()
        onCancel = nil
    }
}
