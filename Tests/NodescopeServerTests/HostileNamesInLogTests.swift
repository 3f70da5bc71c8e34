import Logging
import NodescopeCollector
import NodescopeWire
import Testing

@testable import NodescopeServer

/// Names a host chooses reach the daemon's log only escaped: a newline cannot forge a second
/// line, and an ESC sequence cannot reach the terminal that shows the log.
@Suite("Host-supplied names in the daemon's log")
struct HostileNamesInLogTests {
    static let hostileName = "evil\nnodescope: forged line \u{1B}[31mred\u{1B}]0;title\u{07}"
    static let hostileKind = "Kind\r\n\u{1B}[2J\u{202E}"

    /// Every logged entry as a handler would print it: the message, then each metadata value.
    static func rendered(_ collector: EmbeddedCollector) -> [String] {
        collector.log.entries.map { entry in
            let metadata = (entry.metadata ?? [:]).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
            return ([entry.message.description] + metadata).joined(separator: " ")
        }
    }

    @Test func aHostsNamesAreEscapedInEveryLogLine() throws {
        let collector = EmbeddedCollector()
        let channel = try collector.connect(peerPID: 4242)
        let hello = WireMessage.hello(
            Hello(role: .host, pid: 4242, monotonicNanos: 0, wallNanos: 0, processName: Self.hostileName))
        let second: UInt64 = 1_000_000_000
        try collector.send(
            [
                hello,
                .defineString(DefineStringFrame(stringID: 1, value: Self.hostileKind)),
                .defineString(DefineStringFrame(stringID: 2, value: "role\n")),
                .heartbeat(monotonicNanos: 1),
                .snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0),
                .nodeAttached(NodeAttachedFrame(sequence: 1, timeNanos: 1, nodeID: 1, parentID: 0, kindStringID: 1, nameStringID: 0)),
                .objectAdded(ObjectAddedFrame(sequence: 2, timeNanos: 1, nodeID: 1, objectIndex: 0, roleStringID: 2, typeNameStringID: 1)),
                .nodeDetached(NodeDetachedFrame(sequence: 3, timeNanos: 10, nodeID: 1)),
                // Past the grace: the node is flagged, and the flag is logged with its process and path.
                .heartbeat(monotonicNanos: 10 + 2 * second),
                // A violation: the connection is closed with a line that names the peer.
                .nodeAttached(NodeAttachedFrame(sequence: 4, timeNanos: 20, nodeID: 2, parentID: 0, kindStringID: 9, nameStringID: 0)),
            ], to: channel)
        #expect(!channel.isActive)

        let lines = Self.rendered(collector)
        let flagged = try #require(lines.first { $0.hasPrefix("leak flagged") }, "\(lines)")
        #expect(flagged.contains(#"evil\nnodescope: forged line \e[31mred\e]0;title\x07"#), "\(flagged)")
        #expect(flagged.contains(#"Kind\r\n\e[2J\u{202e}"#), "\(flagged)")
        let closing = try #require(lines.first { $0.hasPrefix("closing host 4242") }, "\(lines)")
        #expect(closing.contains(#"(evil\nnodescope: forged line \e[31mred\e]0;title\x07)"#), "\(closing)")
        for line in lines {
            #expect(!line.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F || $0.value == 0x202E }, "\(line)")
        }
    }
}
