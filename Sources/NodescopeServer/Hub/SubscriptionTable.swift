import NodescopeCollector

/// Who follows which host session, and how many bytes written to each connection its peer has
/// not taken yet: the hub's bookkeeping and its decisions about slow clients, as a plain value
/// without I/O (docs/PROTOCOL.md, section 10).
///
/// The hub tells it what happened (a connection opened or closed, bytes written or taken, a
/// subscription asked for or ended) and asks it what to do: whether to answer a request, and,
/// when a session changes, which subscribers get the change and which are let go.
struct SubscriptionTable {
    /// One subscription: the connection that asked, and the id its events carry (the subscribe
    /// request's id, docs/PROTOCOL.md section 8).
    struct Subscriber: Equatable {
        /// The connection the events go to.
        var connection: ConnectionID
        /// The subscription id in every event frame.
        var subscriptionID: UInt32
    }

    /// What to do for one subscriber when its session changes.
    enum Delivery: Equatable {
        /// Send the change to this subscriber.
        case send(Subscriber)
        /// Close this connection, logging the reason: it does not take what it was sent. Its
        /// subscriptions are already over.
        case evict(ConnectionID, reason: String)
    }

    /// Whether to answer a client's request.
    enum RequestAdmission: Equatable {
        /// Answer it.
        case answer
        /// Do not answer; close the connection, logging the reason.
        case disconnect(reason: String)
    }

    /// The bounds on bytes waiting for one connection.
    let limits: ServerLimits
    /// Bytes written to each open connection and not yet taken by the socket.
    private var pendingBytes: [ConnectionID: Int] = [:]
    /// The subscribers of each session, in the order they subscribed.
    private var subscribers: [SessionID: [Subscriber]] = [:]
    private var lastConnection: UInt64 = 0
    /// The connections admitted after their hello, hosts and clients apart.
    private var admittedHosts: Set<ConnectionID> = []
    private var admittedClients: Set<ConnectionID> = []

    /// An empty table applying `limits`.
    init(limits: ServerLimits) {
        self.limits = limits
    }

    // MARK: Connections

    /// Registers a new connection and returns its id.
    mutating func open() -> ConnectionID {
        lastConnection += 1
        let connection = ConnectionID(rawValue: lastConnection)
        pendingBytes[connection] = 0
        return connection
    }

    /// Forgets a closed connection: its waiting bytes and its subscriptions.
    mutating func close(_ connection: ConnectionID) {
        pendingBytes[connection] = nil
        admittedHosts.remove(connection)
        admittedClients.remove(connection)
        removeSubscriptions { $0.connection == connection }
    }

    /// How many connections are open (admitted or still before their hello).
    var connectionCount: Int { pendingBytes.count }

    /// Admits `connection`, which said hello as a host or a client, when its kind has room:
    /// at most ``ServerLimits/maxConnections`` hosts and, counted apart,
    /// ``ServerLimits/maxClientConnections`` clients, so that clients never take a host's place.
    /// False (refuse it as busy) when there is none.
    mutating func admit(_ connection: ConnectionID, asHost: Bool) -> Bool {
        guard pendingBytes[connection] != nil else { return false }
        if asHost {
            guard admittedHosts.contains(connection) || admittedHosts.count < limits.maxConnections else { return false }
            admittedHosts.insert(connection)
        } else {
            guard admittedClients.contains(connection) || admittedClients.count < limits.maxClientConnections else {
                return false
            }
            admittedClients.insert(connection)
        }
        return true
    }

    /// How many hosts and how many clients are admitted now.
    var admittedCounts: (hosts: Int, clients: Int) { (admittedHosts.count, admittedClients.count) }

    /// Bytes written to `connection` that its peer has not taken yet (0 for a closed one).
    func pendingBytes(of connection: ConnectionID) -> Int { pendingBytes[connection] ?? 0 }

    /// Counts `count` bytes written to `connection` as waiting.
    mutating func wrote(_ count: Int, to connection: ConnectionID) {
        pendingBytes[connection]? += count
    }

    /// Counts `count` bytes of `connection` as taken (written to the socket, or dropped with
    /// the connection). Nothing for a connection already closed.
    mutating func taken(_ count: Int, by connection: ConnectionID) {
        pendingBytes[connection]? -= count
    }

    /// Whether to answer a request from `connection`: not when more than
    /// ``ServerLimits/maxPendingClientBytes`` of earlier answers wait unread.
    func admitRequest(from connection: ConnectionID) -> RequestAdmission {
        let waiting = pendingBytes(of: connection)
        guard waiting > limits.maxPendingClientBytes else { return .answer }
        return .disconnect(
            reason: "the client does not read its answers (\(waiting) bytes waiting, over the limit of "
                + "\(limits.maxPendingClientBytes))")
    }

    // MARK: Subscriptions

    /// Adds a subscription of `connection` to `session` with the id `subscriptionID`. False when
    /// the connection already follows that session (one subscription each).
    mutating func subscribe(_ connection: ConnectionID, to session: SessionID, subscriptionID: UInt32) -> Bool {
        if subscribers[session]?.contains(where: { $0.connection == connection }) == true { return false }
        subscribers[session, default: []].append(Subscriber(connection: connection, subscriptionID: subscriptionID))
        return true
    }

    /// Ends the subscription `subscriptionID` of `connection`; false when it has none with that id.
    mutating func unsubscribe(_ connection: ConnectionID, subscriptionID: UInt32) -> Bool {
        removeSubscriptions { $0.connection == connection && $0.subscriptionID == subscriptionID } > 0
    }

    /// Ends every subscription to `session` (the host went away; its last change was sent).
    mutating func sessionEnded(_ session: SessionID) {
        subscribers[session] = nil
    }

    /// The subscribers of `session`, in the order they subscribed.
    func subscribers(of session: SessionID) -> [Subscriber] {
        subscribers[session] ?? []
    }

    /// What to do for each subscriber of `session` that has a change to send. A subscriber with
    /// more than ``ServerLimits/maxPendingSubscriberBytes`` waiting (a suspended `attach`) is
    /// evicted, so that the daemon never buffers without bound: all its subscriptions end here.
    mutating func deliveries(for session: SessionID) -> [Delivery] {
        subscribers(of: session).map { subscriber in
            let waiting = pendingBytes(of: subscriber.connection)
            guard waiting > limits.maxPendingSubscriberBytes else { return .send(subscriber) }
            removeSubscriptions { $0.connection == subscriber.connection }
            return .evict(
                subscriber.connection,
                reason: "the subscriber does not keep up (\(waiting) bytes waiting, over the limit of "
                    + "\(limits.maxPendingSubscriberBytes))")
        }
    }

    /// Removes the subscriptions that match, and returns how many there were.
    @discardableResult
    private mutating func removeSubscriptions(where matches: (Subscriber) -> Bool) -> Int {
        var removed = 0
        for session in Array(subscribers.keys) {
            let list = subscribers[session] ?? []
            let kept = list.filter { !matches($0) }
            removed += list.count - kept.count
            subscribers[session] = kept.isEmpty ? nil : kept
        }
        return removed
    }
}
