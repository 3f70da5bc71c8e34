import NIOCore

/// The bounds on what a browser, or another local user who can reach the port, can make the web
/// view hold, and through it the collector: connections, event streams (each one a subscription
/// on the collector), questions to the collector at once, and how long a connection may take to
/// send a request. The collector's own limits count the web view as clients, apart from hosts, so
/// no web page ever takes a host's place (docs/PROTOCOL.md, section 10).
package struct WebLimits: Sendable, Equatable {
    /// The most HTTP connections open at once. Beyond it the server stops accepting until one
    /// closes: new connections wait in the kernel's queue (``backlog``) and, past it, are refused
    /// by the kernel. Default 64.
    package var maxConnections: Int
    /// The length of the kernel's queue of connections not yet accepted. Default 256.
    package var backlog: Int
    /// The most `/api/events` streams at once (each holds one connection to the collector for as
    /// long as the page shows a process); one more is answered 503. Default 16.
    package var maxEventStreams: Int
    /// The most other requests asking the collector at once (`/api/processes`, `/api/tree`, …);
    /// one more is answered 503. Default 16.
    package var maxCollectorRequests: Int
    /// How long a connection may wait before sending a whole request: from its opening, or from
    /// the end of its last answer. A connection that sends nothing, or only part of a request
    /// (head or body), for that long is closed. An answer being written (an event stream) does
    /// not count. Default 10 s.
    package var requestDeadline: TimeAmount

    /// Limits with the defaults described on each property.
    package init(
        maxConnections: Int = 64, backlog: Int = 256, maxEventStreams: Int = 16, maxCollectorRequests: Int = 16,
        requestDeadline: TimeAmount = .seconds(10)
    ) {
        self.maxConnections = maxConnections
        self.backlog = backlog
        self.maxEventStreams = maxEventStreams
        self.maxCollectorRequests = maxCollectorRequests
        self.requestDeadline = requestDeadline
    }

    /// The most diagrams (SVG or DOT) the web views of one process draw at once; one more is
    /// answered 503. Drawing is bounded by the renderer's own size bound (100,000 boxes), and
    /// this bounds how many such drawings run side by side.
    package static let maxRenders = 2

    /// The most connections to the collector that one web view holds at once.
    package var maxCollectorConnections: Int { maxEventStreams + maxCollectorRequests }
}
