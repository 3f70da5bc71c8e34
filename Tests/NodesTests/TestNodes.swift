import Nodes

/// A shared, ordered log of lifecycle hooks, for asserting on order.
final class HookLog {
    private(set) var entries: [String] = []
    func append(_ entry: String) { entries.append(entry) }
    func clear() { entries.removeAll() }
}

final class TestWorker: AbstractWorker<CancellationToken> {
    let label: String
    let log: HookLog
    init(_ label: String, log: HookLog) {
        self.label = label
        self.log = log
    }
    override func didStart() { log.append("\(label) worker start") }
    override func willStop() { log.append("\(label) worker stop") }
}

final class TestContext: AbstractContext<CancellationToken> {
    let label: String
    let log: HookLog
    init(_ label: String, log: HookLog, workers: [Worker]) {
        self.label = label
        self.log = log
        super.init(workers: workers)
    }
    override func didBecomeActive() { log.append("\(label) context active") }
    override func willResignActive() { log.append("\(label) context resign") }
}

/// A flow whose children are attached by the test.
final class TestFlow: AbstractFlow<TestContext, HeadlessViewController> {
    let label: String
    let log: HookLog
    init(_ label: String, log: HookLog, workerCount: Int = 1) {
        self.label = label
        self.log = log
        let workers = (0..<workerCount).map { _ in TestWorker("\(label)", log: log) as Worker }
        super.init(
            context: TestContext(label, log: log, workers: workers),
            viewController: HeadlessViewController(title: label))
    }
    override var nodeName: String { label }
    override func didStart() { log.append("\(label) flow start") }

    /// Builds a child, presents its view, and attaches it: the order of the seed.
    @discardableResult
    func show(_ child: TestFlow) -> TestFlow {
        viewController.present(child.getViewController())
        attach(starting: child)
        return child
    }

    func hide(_ child: TestFlow) {
        detach(ending: child)
        viewController.dismiss(child.getViewController())
    }
}

/// A long-lived service that keeps closures: the classic retain-cycle trap.
final class EventService {
    var listeners: [() -> Void] = []
}
