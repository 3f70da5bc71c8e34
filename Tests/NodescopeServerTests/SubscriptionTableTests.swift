import NodescopeCollector
import Testing

@testable import NodescopeServer

/// The hub's bookkeeping without I/O: subscriptions, bytes waiting per connection, and the
/// decisions about slow clients.
@Suite("SubscriptionTable: who follows what, and who is let go")
struct SubscriptionTableTests {
    private let first = SessionID(rawValue: 1)
    private let second = SessionID(rawValue: 2)

    @Test func aConnectionFollowsAProcessOnceAndEndsOnlyItsOwnSubscriptions() {
        var table = SubscriptionTable(limits: ServerLimits())
        let a = table.open()
        let b = table.open()
        let subscribed = [
            table.subscribe(a, to: first, subscriptionID: 1),
            table.subscribe(a, to: first, subscriptionID: 2),
            table.subscribe(a, to: second, subscriptionID: 3),
            table.subscribe(b, to: first, subscriptionID: 1),
        ]
        #expect(subscribed == [true, false, true, true])
        #expect(table.subscribers(of: first) == [.init(connection: a, subscriptionID: 1), .init(connection: b, subscriptionID: 1)])

        let unsubscribed = [
            table.unsubscribe(b, subscriptionID: 3), table.unsubscribe(a, subscriptionID: 1),
            table.unsubscribe(a, subscriptionID: 1),
        ]
        #expect(unsubscribed == [false, true, false])
        #expect(table.subscribers(of: first) == [.init(connection: b, subscriptionID: 1)])

        table.sessionEnded(first)
        #expect(table.subscribers(of: first).isEmpty)
        #expect(table.subscribers(of: second) == [.init(connection: a, subscriptionID: 3)])
    }

    @Test func aClosedConnectionIsForgottenAndItsIdNeverReused() {
        var table = SubscriptionTable(limits: ServerLimits(maxClientConnections: 1))
        let a = table.open()
        let admittedA = table.admit(a, asHost: false)
        _ = table.subscribe(a, to: first, subscriptionID: 1)
        table.wrote(100, to: a)
        let b = table.open()
        let admittedOverLimit = table.admit(b, asHost: false)
        table.close(a)
        let admittedAfterClose = table.admit(b, asHost: false)
        #expect([admittedA, admittedOverLimit, admittedAfterClose] == [true, false, true])
        #expect(table.subscribers(of: first).isEmpty)
        #expect(table.pendingBytes(of: a) == 0)
        // A write that completes after the close changes nothing.
        table.taken(100, by: a)
        #expect(table.pendingBytes(of: a) == 0)
        let next = table.open()
        #expect(next > b)
    }

    @Test func hostsAndClientsAreCountedApartSoClientsNeverTakeAHostsPlace() {
        var table = SubscriptionTable(limits: ServerLimits(maxConnections: 2, maxClientConnections: 3))
        var clients: [ConnectionID] = []
        var clientAdmissions: [Bool] = []
        for _ in 0..<4 {
            let client = table.open()
            clients.append(client)
            clientAdmissions.append(table.admit(client, asHost: false))
        }
        #expect(clientAdmissions == [true, true, true, false])
        var hosts: [ConnectionID] = []
        var hostAdmissions: [Bool] = []
        for _ in 0..<3 {
            let host = table.open()
            hosts.append(host)
            hostAdmissions.append(table.admit(host, asHost: true))
        }
        #expect(hostAdmissions == [true, true, false], "clients at their limit take no host's place")
        #expect(table.admittedCounts == (hosts: 2, clients: 3))
        table.close(hosts[0])
        let hostAfterClose = table.admit(hosts[2], asHost: true)
        let clientAfterHostLeft = table.admit(clients[3], asHost: false)
        #expect(hostAfterClose)
        #expect(!clientAfterHostLeft, "a host that leaves makes no room for clients")
    }

    @Test func aClientWithTooManyAnswersUnreadIsNotAnsweredAgain() {
        var table = SubscriptionTable(limits: ServerLimits(maxPendingClientBytes: 8))
        let a = table.open()
        table.wrote(8, to: a)
        #expect(table.admitRequest(from: a) == .answer)
        table.wrote(2, to: a)
        #expect(
            table.admitRequest(from: a)
                == .disconnect(reason: "the client does not read its answers (10 bytes waiting, over the limit of 8)"))
        table.taken(5, by: a)
        #expect(table.admitRequest(from: a) == .answer)
    }

    @Test func aSubscriberThatDoesNotKeepUpIsEvictedFromEverySubscription() {
        var table = SubscriptionTable(limits: ServerLimits(maxPendingSubscriberBytes: 8))
        let slow = table.open()
        let quick = table.open()
        _ = table.subscribe(slow, to: first, subscriptionID: 1)
        _ = table.subscribe(slow, to: second, subscriptionID: 2)
        _ = table.subscribe(quick, to: first, subscriptionID: 5)
        table.wrote(8, to: slow)
        // At the limit, still served.
        let atLimit = table.deliveries(for: first)
        #expect(atLimit.count == 2)
        table.wrote(1, to: slow)
        let overLimit = table.deliveries(for: first)
        #expect(
            overLimit == [
                .evict(slow, reason: "the subscriber does not keep up (9 bytes waiting, over the limit of 8)"),
                .send(.init(connection: quick, subscriptionID: 5)),
            ])
        // Its other subscriptions ended with it: it is evicted once.
        let (elsewhere, again) = (table.deliveries(for: second), table.deliveries(for: first))
        #expect(elsewhere.isEmpty)
        #expect(again == [.send(.init(connection: quick, subscriptionID: 5))])
    }
}
