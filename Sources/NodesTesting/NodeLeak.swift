/// A node attached under a test that was still alive a grace after its detach, as the in-test
/// assertions report it.
public struct NodeLeak: Sendable, Equatable, CustomStringConvertible {
    /// The node's name (`ProfileFlow`).
    public var name: String
    /// Where it was attached, when known.
    public var attachSite: AttachSite?
    /// Its objects still alive: `context ProfileContext`.
    public var alive: [String]
    /// What holds each alive object, one line per object its analysis explained:
    /// `context ProfileContext: held by ActivityCenter ─ .listeners[0] ─▶ ProfileContext`.
    public var retainers: [String]

    /// A leak.
    public init(name: String, attachSite: AttachSite?, alive: [String], retainers: [String]) {
        self.name = name
        self.attachSite = attachSite
        self.alive = alive
        self.retainers = retainers
    }

    /// `ProfileFlow (attached at AppFlow.swift:14) leaked: alive context ProfileContext;
    /// context ProfileContext: held by …`.
    public var description: String {
        let site = attachSite.map { " (attached at \($0))" } ?? ""
        return ["\(name)\(site) leaked: alive \(alive.joined(separator: ", "))", retainers.joined(separator: "; ")]
            .filter { !$0.isEmpty }.joined(separator: "; ")
    }
}
