import Glibc
import Nodes

// Six ways to leak a node, one node each, for the retainer analysis's end-to-end test
// (Tests/CheckTests). Every leaking node is a child of the root, and the leaked object is its
// context (for the global way: its flow, which holds the rest of the node).

/// The root's context: long-lived, and so where children get kept by mistake.
final class WaysContext: AbstractContext<CancellationToken> {
    /// Callbacks kept for the life of the app.
    var callbacks: [() -> Void] = []
    /// Objects kept by name for the life of the app.
    var cache: [String: AnyObject] = [:]
}

/// The root node.
final class WaysFlow: AbstractFlow<WaysContext, HeadlessViewController> {
    init() {
        super.init(context: WaysContext(workers: []), viewController: HeadlessViewController(title: "Ways"))
    }
}

/// A singleton that keeps the context it was last given (used on the main thread only).
final class ActivityCenter: @unchecked Sendable {
    static let shared = ActivityCenter()
    var current: AnyObject?
}

/// The other half of a two-object cycle.
final class Partner {
    var context: CycleContext?
}

/// 1. A cycle: the context keeps a partner that keeps the context.
final class CycleContext: AbstractContext<CancellationToken> {
    var partner: Partner?
    override func didBecomeActive() {
        let partner = Partner()
        partner.context = self
        self.partner = partner
    }
}

/// 2. A closure that captures the context, kept in the root's array.
final class ClosureContext: AbstractContext<CancellationToken> {
    weak var root: WaysContext?
    var count = 0
    override func didBecomeActive() {
        root?.callbacks.append { self.count += 1 }
    }
}

/// 3. The context kept as a dictionary value by the root.
final class DictionaryContext: AbstractContext<CancellationToken> {
    weak var root: WaysContext?
    override func didBecomeActive() {
        root?.cache["profile"] = self
    }
}

/// 4. The context kept in a stored property of a singleton.
final class SingletonContext: AbstractContext<CancellationToken> {
    override func didBecomeActive() {
        ActivityCenter.shared.current = self
    }
}

/// 5. A node whose flow a global variable keeps (see main.swift).
final class GlobalContext: AbstractContext<CancellationToken> {}

/// 6. The context held only by another thread, which keeps it in a local while it sleeps.
final class StackContext: AbstractContext<CancellationToken> {
    override func didBecomeActive() {
        let argument = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        _ = pthread_create(&thread, nil, holdForever, argument)
    }
}

/// The other thread of way 6: it keeps the context in a local and sleeps. A function of its own,
/// not a closure in the context's (main-actor) method, so that it is not checked to run there.
private func holdForever(_ argument: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
    guard let argument else { return nil }
    let held = Unmanaged<StackContext>.fromOpaque(argument).takeRetainedValue()
    while true {
        sleep(1_000)
        withExtendedLifetime(held) {}
    }
}

/// One node of one way: a flow with its context and a view.
final class WayFlow<Context: AbstractContext<CancellationToken>>: AbstractFlow<Context, HeadlessViewController> {
    init(_ context: Context, title: String) {
        super.init(context: context, viewController: HeadlessViewController(title: title))
    }
}
