import Foundation
import Glibc
import NodescopeCollector
import NodescopeWire
import ProcessTestSupport
import Testing

/// `nodescope check` with a host of protocol version 2 that explains its leaks. No host of this
/// repository analyses its heap yet, so the host is a crafted byte stream, written to the
/// check's collector by a few lines of Python: what a real agent would send.
@Suite("nodescope check with retainer paths", .serialized, .offTheCooperativePool)
struct CheckRetainersTests {
    /// The stream of a host whose SettingsFlow only a global holds and, when `withHolderPath`,
    /// whose ProfileFlow's context a session's listener closure holds.
    static func hostStream(withHolderPath: Bool) -> [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        // Every time lies in the past: five seconds ago the tree was built, then detached.
        let start = UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec) - 5_000_000_000
        let strings = [
            "AppFlow", "flow", "SettingsFlow", "context", "SettingsContextImp", "ProfileFlow", "ProfileContextImp", "AppFlowImp",
        ]
        var messages: [WireMessage] = [
            .hello(Hello(protocolVersion: 2, role: .host, pid: 4242, monotonicNanos: start, wallNanos: 0, processName: "crafted-host"))
        ]
        messages += strings.enumerated().map { .defineString(DefineStringFrame(stringID: UInt32($0.offset + 1), value: $0.element)) }
        messages += [.snapshotBegin(SnapshotBeginFrame(sequence: 0, nodeCount: 0)), .snapshotEnd(sequence: 0)]
        var sequence: UInt64 = 0
        func next() -> UInt64 {
            sequence += 1
            return sequence
        }
        func node(_ id: UInt64, parent: UInt64, kind: UInt32, role: UInt32, type: UInt32) {
            messages.append(
                .nodeAttached(
                    NodeAttachedFrame(sequence: next(), timeNanos: start, nodeID: id, parentID: parent, kindStringID: kind, nameStringID: 0)
                ))
            messages.append(
                .objectAdded(
                    ObjectAddedFrame(
                        sequence: next(), timeNanos: start, nodeID: id, objectIndex: 0, roleStringID: role, typeNameStringID: type)))
        }
        node(1, parent: 0, kind: 1, role: 2, type: 8)
        node(3, parent: 1, kind: 3, role: 4, type: 5)
        if withHolderPath { node(2, parent: 1, kind: 6, role: 4, type: 7) }
        for id: UInt64 in withHolderPath ? [3, 2] : [3] {
            messages.append(.nodeDetached(NodeDetachedFrame(sequence: next(), timeNanos: start + 100_000_000, nodeID: id)))
        }
        // The grace (1 s) has run out for both.
        messages.append(.heartbeat(monotonicNanos: start + 2_000_000_000))
        messages.append(
            .retainers(
                RetainersFrame(
                    nodeID: 3, objectIndex: 0, verdict: .global,
                    hops: [RetainerHop(holderKind: .global, holder: "main.settings", reference: "")])))
        if withHolderPath {
            messages.append(
                .retainers(
                    RetainersFrame(
                        nodeID: 2, objectIndex: 0, verdict: .holder, elapsedMicros: 800,
                        hops: [
                            RetainerHop(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".session"),
                            RetainerHop(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
                            RetainerHop(holderKind: .closureContext, holder: "closure context", reference: "capture"),
                        ])))
        }
        messages.append(.goodbye(.normalExit))
        var encoder = FrameEncoder()
        var bytes: [UInt8] = []
        for message in messages { encoder.encode(message, into: &bytes) }
        return bytes
    }

    /// The command that plays the host: Python writes the stream to `NODESCOPE_SOCKET` and reads
    /// until the collector closes the connection at the goodbye.
    static func hostCommand(_ stream: URL) -> [String] {
        let script = """
            import os, socket, sys
            data = open(sys.argv[1], 'rb').read()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(os.environ['NODESCOPE_SOCKET'])
            s.sendall(data)
            while s.recv(65536):
                pass
            """
        return ["/usr/bin/env", "python3", "-c", script, stream.path]
    }

    static let pythonAvailable: Bool = {
        (try? CheckRunner.run("/usr/bin/env", ["python3", "-c", "import socket"]).status) == 0
    }()

    private func writeStream(withHolderPath: Bool, in directory: URL) throws -> URL {
        let file = directory.appendingPathComponent("host.bin")
        try Data(Self.hostStream(withHolderPath: withHolderPath)).write(to: file)
        return file
    }

    @Test(.enabled(if: pythonAvailable, "needs python3 to play the host"))
    func aLeakHeldOnlyByAGlobalPassesUnlessGlobalsCount() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let command = Self.hostCommand(try writeStream(withHolderPath: false, in: directory))
        let run = try CheckRunner.check(["--"] + command)
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stderr.contains("RETAINED BY GLOBAL  AppFlow › SettingsFlow  (SettingsFlow)"), "\(run.stderr)")
        #expect(run.stderr.contains("    retained by global `main.settings`\n"))
        #expect(run.stderr.contains("nodescope check: no new leaks (1 retained by a global) — passing"))

        let counted = try CheckRunner.check(["--count-globals", "--"] + command)
        #expect(counted.status == 1, "\(counted.stderr)")
        #expect(counted.stderr.contains("LEAK  AppFlow › SettingsFlow"))
        #expect(counted.stderr.contains("nodescope check: 1 new leak — failing"))
    }

    @Test(.enabled(if: pythonAvailable, "needs python3 to play the host"))
    func aHolderPathReachesEveryReport() throws {
        let directory = makeReportDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let (json, junit, sarif, svg) = (
            directory.appendingPathComponent("r.json"), directory.appendingPathComponent("r.xml"),
            directory.appendingPathComponent("r.sarif"), directory.appendingPathComponent("svg")
        )
        let run = try CheckRunner.check(
            ["--json", json.path, "--junit", junit.path, "--sarif", sarif.path, "--svg-dir", svg.path, "--"]
                + Self.hostCommand(try writeStream(withHolderPath: true, in: directory)))
        #expect(run.status == 1, "\(run.stderr)")
        #expect(
            run.stderr.contains(
                """
                  alive:       context ProfileContextImp
                    held by  AppFlowImp (attached node)
                             ─ .session ─▶ Session
                             ─ .listeners[0] ─▶ closure context   ◀ suspect: the reference to cut
                             ─ capture ─▶ ProfileContextImp

                """), "\(run.stderr)")
        #expect(run.stderr.contains("nodescope check: 1 new leak (1 retained by a global) — failing"))

        let data = try Data(contentsOf: json)
        let result = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        let leaks = try #require(result["leaks"] as? [[String: Any]])
        #expect(leaks.map { $0["pathText"] as? String } == ["AppFlow/ProfileFlow", "AppFlow/SettingsFlow"])
        #expect(leaks.map { $0["fails"] as? Bool } == [true, false])
        #expect(leaks.map { $0["retainedByGlobal"] as? Bool } == [false, true])
        let retainers = try #require(leaks[0]["retainers"] as? [[String: Any]])
        let hops = try #require(retainers.first?["hops"] as? [[String: Any]])
        #expect(hops.map { $0["holder"] as? String } == ["AppFlowImp", "Session", "closure context"])
        #expect(hops.map { $0["reference"] as? String } == [".session", ".listeners[0]", "capture"])
        #expect(retainers.first?["suspectHop"] as? Int == 1)
        let fingerprint = try #require(leaks[0]["fingerprint"] as? String)
        let path = RetainerPath(
            objectIndex: 0, verdict: .holder,
            hops: [
                .init(holderKind: .attachedNodeObject, holderNodeID: 1, holder: "AppFlowImp", reference: ".session"),
                .init(holderKind: .object, holder: "Session", reference: ".listeners[0]", isSuspect: true),
                .init(holderKind: .closureContext, holder: "closure context", reference: "capture"),
            ])
        #expect(
            fingerprint
                == LeakFingerprint.fingerprint(
                    path: ["AppFlow", "ProfileFlow"],
                    aliveObjects: [ObjectInfo(index: 0, role: "context", typeName: "ProfileContextImp", isAlive: true)],
                    retainers: [path]))
        if jsonSchemaValidatorAvailable {
            #expect(try validate(json, against: repositoryRoot.appendingPathComponent("docs/check-report.schema.json")) == nil)
        }

        let xml = try String(contentsOf: junit, encoding: .utf8)
        #expect(
            xml.contains("message=\"leaked: alive context ProfileContextImp; held by Session.listeners[0]; fingerprint \(fingerprint)\""))
        #expect(xml.contains("name=\"AppFlow/SettingsFlow (retained by global)\""))
        let sarifText = try String(contentsOf: sarif, encoding: .utf8)
        #expect(sarifText.contains("\"fullyQualifiedName\": \"Session.listeners[0]\""))
        #expect(sarifText.contains("\"ruleId\": \"node-retained-by-global\""))
        let drawing = try String(contentsOf: svg.appendingPathComponent("leak-\(fingerprint).svg"), encoding: .utf8)
        #expect(drawing.contains(">context: held by AppFlowImp (attached node)</text>"), "\(drawing)")
        #expect(drawing.contains(">─ .listeners[0] ─▶ closure context ◀ suspect: the reference to cut</text>"))
        #expect(drawing.contains("xlink:title=\"context ProfileContextImp: held by AppFlowImp (attached node) ─ .session ─▶ Session"))
    }
}
