import Glibc
import NodesRetainers
import NodescopeWire

/// The in-test leak check: which nodes attached under a test are still alive a grace after
/// their detach, and what holds them. The swift-testing trait (``NodeTrackingTrait``) and the
/// XCTest base class (``NodesTestCase``) run it when a test ends; any framework can call it.
public enum NodeLeakCheck {
    /// Makes `tracker` keep its tree (it does already when a collector listens), so that the
    /// nodes of a test can be checked: call it before the test attaches nodes.
    public static func prepare(_ tracker: NodeTracker = .current) {
        if !tracker.isRecording { tracker.startRecording() }
    }

    /// Waits until every node attached under `test` in `tracker` and detached is released, or
    /// its grace after its detach has run out, and returns those still alive, each with what
    /// holds its alive objects (unless `explaining` is false). Nodes still attached are not judged.
    public static func leaks(
        of test: TestIdentity, in tracker: NodeTracker = .current, grace: Duration = .seconds(1), explaining: Bool = true
    ) async -> [NodeLeak] {
        while true {
            switch pending(of: test, in: tracker, grace: grace) {
            case .wait(let nanoseconds):
                try? await Task.sleep(for: .nanoseconds(Int64(clamping: min(nanoseconds, 5_000_000))))
            case .done(let leaked):
                return describe(leaked, in: tracker, explaining: explaining)
            }
        }
    }

    /// ``leaks(of:in:grace:explaining:)`` for a synchronous caller (XCTest's `invokeTest`),
    /// which it blocks while it waits.
    public static func leaksWaiting(
        of test: TestIdentity, in tracker: NodeTracker = .current, grace: Duration = .seconds(1), explaining: Bool = true
    ) -> [NodeLeak] {
        while true {
            switch pending(of: test, in: tracker, grace: grace) {
            case .wait(let nanoseconds):
                usleep(useconds_t(clamping: min(nanoseconds, 5_000_000) / 1_000 + 1))
            case .done(let leaked):
                return describe(leaked, in: tracker, explaining: explaining)
            }
        }
    }

    private enum Progress {
        case wait(UInt64)
        case done([NodeSnapshot])
    }

    private static func pending(of test: TestIdentity, in tracker: NodeTracker, grace: Duration) -> Progress {
        let graceNanos = nanoseconds(grace)
        let now = MonotonicClock.now()
        var leaked: [NodeSnapshot] = []
        var latestDeadline: UInt64 = 0
        for node in tracker.snapshot().nodes where node.origin.test == test {
            guard let detachedAt = node.detachedAt, node.objects.contains(where: \.isAlive) else { continue }
            let (deadline, overflow) = detachedAt.addingReportingOverflow(graceNanos)
            if overflow || deadline <= now {
                leaked.append(node)
            } else {
                latestDeadline = max(latestDeadline, deadline)
            }
        }
        return latestDeadline > now ? .wait(latestDeadline - now) : .done(leaked)
    }

    /// The bounds of an in-test analysis. A test waits for its verdict, off any app's hot path,
    /// so it gets far more time than the agent's analysis in a running app: 2 s per object and
    /// per call at least, or `NODESCOPE_RETAINER_MS` per object when set (as for the agent). A
    /// message that says "cut short" on a loaded machine would fail an assertion for nothing.
    static var assertionLimits: RetainerAnalysis.Limits {
        var limits = RetainerAnalysis.Limits()
        let perObject = AgentSettings.fromEnvironment().retainerNanosPerObject ?? 2_000_000_000
        limits.timePerObjectNanos = perObject
        limits.leastTimePerBatchNanos = max(limits.leastTimePerBatchNanos, perObject)
        limits.timePerBatchNanos = max(limits.timePerBatchNanos, 4 * perObject)
        return limits
    }

    private static func describe(_ nodes: [NodeSnapshot], in tracker: NodeTracker, explaining: Bool) -> [NodeLeak] {
        guard !nodes.isEmpty else { return [] }
        let frames = explaining ? tracker.explain(nodes.map(\.id), with: RetainerAnalysis(limits: assertionLimits)).0 : []
        return nodes.map { node in
            let alive = node.objects.filter(\.isAlive)
            let retainers = alive.compactMap { object -> String? in
                guard let frame = frames.first(where: { $0.nodeID == node.id.rawValue && $0.objectIndex == object.index }) else {
                    return nil
                }
                return "\(object.role.rawValue) \(object.typeName): \(RetainerLine.text(frame, objectType: object.typeName))"
            }
            return NodeLeak(
                name: node.name, attachSite: node.origin.site, alive: alive.map { "\($0.role.rawValue) \($0.typeName)" },
                retainers: retainers)
        }
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(clamping: seconds) &* 1_000_000_000 &+ UInt64(clamping: attoseconds / 1_000_000_000)
    }
}

/// A retainer path on one line, as the in-test assertions print it.
enum RetainerLine {
    static func text(_ frame: RetainersFrame, objectType: String) -> String {
        let hops = frame.hops
        var text: String
        switch frame.verdict {
        case .cycle:
            text = "retain cycle: " + hops.map { "\($0.holder) ─ \($0.reference) ─▶ " }.joined() + objectType
        case .unknown, .notAnalyzed:
            text = frame.note.isEmpty ? "holder unknown" : frame.note
        default:
            guard let first = hops.first else { return frame.note.isEmpty ? "holder unknown" : frame.note }
            text = "held by \(first.holder)"
            for (position, hop) in hops.enumerated() {
                let next = position + 1 < hops.count ? hops[position + 1].holder : objectType
                text += hop.reference.isEmpty ? " ─▶ \(next)" : " ─ \(hop.reference) ─▶ \(next)"
            }
        }
        if let suspect = hops.first(where: \.isSuspect) { text += " (suspect: \(suspect.holder)\(suspect.reference))" }
        if frame.cutShort { text += " (cut short)" }
        return text
    }
}
