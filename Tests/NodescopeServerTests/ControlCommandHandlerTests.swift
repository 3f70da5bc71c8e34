import NodescopeCollector
import NodescopeControl
import NodescopeControlCodec
import NodescopeWire
import Testing

@testable import NodescopeServer

/// One handler per control command, as pure functions of a collector and a subscription table.
@Suite("Control command handlers, without I/O")
struct ControlCommandHandlerTests {
    /// Host 42 "app" streaming a root with one child, and one client connection.
    private struct World {
        var collector = Collector()
        var table = SubscriptionTable(limits: ServerLimits())
        let connection: ConnectionID
        let session: SessionID

        init() throws {
            session = collector.openSession(
                Hello(role: .host, pid: 42, monotonicNanos: 0, wallNanos: 0, processName: "app"), now: 0, clocks: .same)
            for message in [.defineString(DefineStringFrame(stringID: 1, value: "Flow"))] + Frames.emptySnapshot + [
                Frames.attached(1, sequence: 1), Frames.attached(2, parent: 1, sequence: 2),
            ] {
                _ = try collector.ingest(message, session: session, now: 0)
            }
            connection = table.open()
        }

        /// The connection's request answered by its command's handler.
        mutating func answer(
            _ command: ControlCommand, _ argument: String, depth: UInt32 = 0, id: UInt32 = 1, now: UInt64 = 5_000
        ) -> ControlAnswer {
            let frame = ControlRequestFrame(requestID: id, command: command, argument: argument, depth: depth)
            let request = ControlRequest(
                frame: frame, connection: connection, collector: collector, now: now, wallClock: WallClockMap(offset: Self.wallOffset))
            return command.handler.answer(request, subscriptions: &table)
        }

        var subscribers: [SubscriptionTable.Subscriber] { table.subscribers(of: session) }

        /// The wall clock less the loop's clock in these tests: 2026-11-27 00:00:00 UTC.
        static let wallOffset: Int64 = 1_795_737_600_000_000_000
    }

    @Test func aTreeIsStampedWithTheRequestsTimeWhileItsProcessRunsAndWithItsEndAfterward() throws {
        var world = try World()
        let running = try ControlBody.decode(TreeView.self, from: world.answer(.tree, "app", now: 7_000).body)
        #expect(running.wallNanos == UInt64(World.wallOffset) + 7_000)
        _ = world.collector.endSession(world.session, normally: true, now: 9_000)
        // Asked later, the ended process's tree stands at its end, whatever the time of asking.
        for now: UInt64 in [9_500, 60_000_000_000] {
            let ended = try ControlBody.decode(TreeView.self, from: world.answer(.tree, "42", now: now).body)
            #expect(ended.wallNanos == UInt64(World.wallOffset) + 9_000)
        }
        let subscribed = world.answer(.subscribe, "42", now: 70_000)
        #expect(subscribed.status == .ok)
        #expect(try ControlBody.decode(TreeView.self, from: subscribed.body).wallNanos == UInt64(World.wallOffset) + 9_000)
    }

    @Test func theTreeDepthCountsTheRootLevel() throws {
        var world = try World()
        let answer = world.answer(.tree, "app", depth: 1)
        #expect(answer.status == .ok)
        let view = try ControlBody.decode(TreeView.self, from: answer.body)
        #expect(view.nodes.map(\.id) == [1])
        #expect(view.truncatedChildren == [1: 1])
    }

    @Test func aSubscriptionIsOnePerProcessAndConnection() throws {
        var world = try World()
        let first = world.answer(.subscribe, "42", id: 3)
        #expect(first.status == .ok && first.events.isEmpty)
        #expect(world.subscribers == [.init(connection: world.connection, subscriptionID: 3)])
        let second = world.answer(.subscribe, "app", id: 4)
        #expect(second.status == .badRequest)
        #expect(
            try ControlBody.decode(ControlBody.Failure.self, from: second.body).error
                == "this connection already follows that process; one subscription each")
        #expect(world.answer(.unsubscribe, "3").status == .ok)
        #expect(world.subscribers.isEmpty)
    }

    @Test func aSubscriptionToAnEndedProcessGetsItsEndAtOnceAndStaysClosed() throws {
        var world = try World()
        _ = world.collector.endSession(world.session, normally: false, now: 5)
        let answer = world.answer(.subscribe, "app", id: 8)
        #expect(answer.status == .ok)
        #expect(try ControlBody.decode(TreeView.self, from: answer.body).nodes.count == 2)
        #expect(answer.events == [.sessionEnded(normally: false)])
        #expect(world.subscribers.isEmpty)
    }

    @Test func anUnknownProcessIsNotFoundForEveryCommandThatNamesOne() throws {
        var world = try World()
        for command in [ControlCommand.tree, .leaks, .subscribe] {
            let answer = world.answer(command, "nothing-like-this")
            #expect(answer.status == .notFound)
            #expect(try ControlBody.decode(ControlBody.Failure.self, from: answer.body).error.contains("nothing-like-this"))
        }
        // Leaks without a process: every process's.
        #expect(world.answer(.leaks, "").status == .ok)
        #expect(world.answer(.listProcesses, "").status == .ok)
    }
}
