/// Logs every event of every module, with the module's name.
final class AnalyticsEventsListener: EventsListener {
    private(set) var log: [String] = []
    private let injectsLeak: Bool

    init(injectsLeak: Bool) {
        self.injectsLeak = injectsLeak
    }

    func listenEvents(from module: Module) {
        if injectsLeak {
            // LEAK (--leak retain-cycle): the handler captures the module, and the module's
            // stream keeps the handler: module → events → handler → module. Once the manager
            // lets the module go, nothing breaks the cycle.
            module.events.subscribe { [self] event in log.append("\(module.name): \(event)") }
        } else {
            let name = module.name
            module.events.subscribe { [self] event in log.append("\(name): \(event)") }
        }
    }
}
