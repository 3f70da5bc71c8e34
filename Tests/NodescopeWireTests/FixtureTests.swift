import Foundation
import NodescopeWire
import Testing

@Suite("Fixture sessions on disk")
struct FixtureTests {
    static let directory = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent(
        "Fixtures")
    static let updating = ProcessInfo.processInfo.environment["NODESCOPE_UPDATE_SNAPSHOTS"] == "1"

    static func fixtureFiles() throws -> [URL] {
        try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "bin" }
            .sorted { $0.lastPathComponent < $1.lastPathComponent }
    }

    @Test("every fixture file decodes fully, ending on a frame boundary")
    func decodeEveryFile() throws {
        let files = try Self.fixtureFiles()
        #expect(files.count >= FixtureSessions.all.count)
        for file in files {
            let bytes = [UInt8](try Data(contentsOf: file))
            var decoder = FrameDecoder()
            var count = 0
            // Feed in socket-sized chunks, as a collector would.
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 4_096, bytes.count)
                decoder.feed(bytes[offset..<end])
                offset = end
                while try decoder.next() != nil {
                    count += 1
                }
            }
            try decoder.finish()
            #expect(count > 0, "\(file.lastPathComponent) holds no frames")
        }
    }

    @Test("each fixture file holds exactly the encoding of its session", arguments: FixtureSessions.all.map(\.file))
    func matchesDefinition(file: String) throws {
        let messages = try #require(FixtureSessions.all.first { $0.file == file }?.messages)
        let expected = encodeAll(messages)
        let url = Self.directory.appendingPathComponent(file)
        if Self.updating {
            try Data(expected).write(to: url)
        }
        let stored = [UInt8](try Data(contentsOf: url))
        #expect(
            stored == expected, "\(file) differs from its definition; rerun with NODESCOPE_UPDATE_SNAPSHOTS=1 if the change is deliberate")
        #expect(decodeAll(stored).messages == messages)
    }

    @Test("host fixtures follow the session rules: hello first, snapshots consistent", arguments: FixtureSessions.all.map(\.file))
    func sessionRules(file: String) throws {
        let messages = try #require(FixtureSessions.all.first { $0.file == file }?.messages)
        guard case .hello(let hello)? = messages.first, hello.role == .host else { return }
        var defined: Set<UInt32> = []
        var snapshotSequence: UInt64?
        var nodesInSnapshot: UInt32 = 0
        var expectSnapshot = true
        var lastSequence: UInt64?
        // Deltas carry strictly increasing sequences, above the sequence of the last snapshot.
        func delta(_ sequence: UInt64) {
            #expect(!expectSnapshot, "a delta before the snapshot")
            if let lastSequence { #expect(sequence > lastSequence, "sequence \(sequence) after \(lastSequence)") }
            lastSequence = sequence
        }
        for message in messages.dropFirst() {
            switch message {
            case .defineString(let definition):
                #expect(defined.insert(definition.stringID).inserted, "string \(definition.stringID) defined twice")
            case .snapshotBegin(let begin):
                snapshotSequence = begin.sequence
                nodesInSnapshot = begin.nodeCount
                expectSnapshot = false
            case .snapshotEnd(let sequence):
                #expect(sequence == snapshotSequence)
                #expect(nodesInSnapshot == 0, "snapshot announced more nodes than it sent")
                snapshotSequence = nil
                lastSequence = sequence
            case .dropped:
                expectSnapshot = true
            case .nodeAttached(let attached):
                #expect(defined.contains(attached.kindStringID))
                if let snapshotSequence {
                    #expect(attached.sequence == snapshotSequence)
                    nodesInSnapshot -= 1
                } else {
                    delta(attached.sequence)
                }
            case .objectAdded(let added):
                #expect(defined.contains(added.roleStringID) && defined.contains(added.typeNameStringID))
                if let snapshotSequence { #expect(added.sequence == snapshotSequence) } else { delta(added.sequence) }
            case .stateChanged(let changed):
                if let snapshotSequence { #expect(changed.sequence == snapshotSequence) } else { delta(changed.sequence) }
            case .nodeDetached(let detached):
                if let snapshotSequence { #expect(detached.sequence == snapshotSequence) } else { delta(detached.sequence) }
            case .objectReleased(let released):
                if let snapshotSequence { #expect(released.sequence == snapshotSequence) } else { delta(released.sequence) }
            case .defineSite, .defineTest, .nodeOrigin:
                #expect(hello.protocolVersion >= 2, "a \(message.frameType) frame in a version \(hello.protocolVersion) stream")
            case .retainers:
                #expect(hello.protocolVersion >= 2, "a retainers frame in a version \(hello.protocolVersion) stream")
                #expect(snapshotSequence == nil, "a retainers frame inside a snapshot")
            default:
                break
            }
        }
    }
}
