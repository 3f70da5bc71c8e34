import Foundation
import NodescopeCollector
import ProcessTestSupport
import Testing

/// Hosts whose exit flush was cut (goodbye `3`, flush incomplete) leave nodes unverified by the
/// hundred: every report tells it once per process, as a count with the way to avoid it, while a
/// host that ended abnormally keeps its own per-node entries and words. Real daemon and CLI; the
/// hosts are raw streams, so that the cut is the same on every run.
@Suite("A cut exit flush is one entry per process", .serialized, .offTheCooperativePool)
struct ExitFlushCutTests {
    typealias Raw = RawFrames

    /// A host that attached `count` nodes under a root, detached them all (their objects still
    /// alive) and said goodbye with `reason` (none: the connection just closes).
    static func stream(pid: UInt32, name: String, count: UInt64, goodbye reason: UInt8?) -> [UInt8] {
        let start = Raw.now()
        var bytes =
            Raw.hello(pid: pid, monotonic: start, name: name) + Raw.defineString(1, "AppFlow") + Raw.defineString(2, "FeedItemFlow")
            + Raw.defineString(3, "flow") + Raw.snapshotBegin(0, nodes: 0) + Raw.snapshotEnd(0)
            + Raw.attached(1, at: start + 1_000, node: 1, kind: 1)
        var sequence: UInt64 = 2
        for node in 2..<(2 + count) {
            bytes += Raw.attached(sequence, at: start + 2_000, node: node, parent: 1, kind: 2)
            bytes += Raw.objectAdded(sequence + 1, at: start + 2_000, node: node, index: 0, role: 3, type: 2)
            sequence += 2
        }
        for node in 2..<(2 + count) {
            bytes += Raw.detached(sequence, at: start + 3_000, node: node)
            sequence += 1
        }
        if let reason { bytes += Raw.goodbye(reason) }
        return bytes
    }

    // A bound for a hang, not a timing: a plain `swift test` beside two CPU hogs ran past 2 minutes.
    @Test(.timeLimit(.minutes(15)))
    func threeCutHostsGiveOneLineEachAndAnAbnormalEndKeepsItsEntries() throws {
        let fixture = try DaemonFixture()
        defer { fixture.stop() }
        let cut: [UInt32] = [4701, 4702, 4703]
        for pid in cut {
            let connection = try #require(RawSocket(path: fixture.socket))
            connection.send(Self.stream(pid: pid, name: "clean-\(pid)", count: 200, goodbye: 3))
            #expect(connection.isClosedByPeer(within: 5), "the collector closes after a goodbye")
            connection.close()
        }
        let crashed = try #require(RawSocket(path: fixture.socket))
        crashed.send(Self.stream(pid: 4704, name: "crashed", count: 2, goodbye: nil))
        Thread.sleep(forTimeInterval: 0.3)
        crashed.close()
        let processes = try fixture.waitForProcesses { list in
            (cut + [4704]).allSatisfy { pid in list.contains { $0.pid == pid && $0.end != nil } }
        }
        for pid in cut {
            let summary = try #require(processes.first { $0.pid == pid })
            #expect(summary.end == .exitFlushCut)
            #expect(summary.counts == NodeCounts(attached: 1, unverified: 200, exitFlushCut: 200), "\(summary.counts)")
        }
        #expect(processes.first { $0.pid == 4704 }?.end == .abnormal)
        #expect(processes.first { $0.pid == 4704 }?.counts.exitFlushCut == 0)

        // JSON: no record of a cut host's nodes; one entry per cut process, with its count.
        let json = try fixture.run(["leaks", "--format", "json"])
        #expect(json.status == 0)
        let document = try #require(try JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
        let records = try #require(document["leaks"] as? [[String: Any]])
        #expect(records.compactMap { $0["pid"] as? Int }.sorted() == [4704, 4704], "\(records.count) records")
        let entries = try #require(document["processes"] as? [[String: Any]])
        for pid in cut {
            let entry = try #require(entries.first { $0["pid"] as? Int == Int(pid) })
            let flush = try #require(entry["exitFlushCut"] as? [String: Any], "\(entry)")
            #expect(flush["unverified"] as? Int == 200)
            #expect((flush["paths"] as? [[String]])?.count == 10)
            #expect((flush["explanation"] as? String)?.contains("NODESCOPE_EXIT_FLUSH") == true)
        }
        #expect((document["counts"] as? [String: Any])?["exitFlushCut"] as? Int == 600)

        // Text: at most one line per process about the cut; the crash keeps its own words.
        let text = try fixture.run(["leaks"]).output
        for pid in cut {
            let lines = text.split(separator: "\n").filter { $0.contains("[pid \(pid)]") }
            #expect(lines.count == 1, "\(text)")
            #expect(lines.first?.contains("exit flush ran out of time") == true, "\(text)")
            #expect(lines.first?.contains("200 nodes are unverified") == true, "\(text)")
        }
        #expect(text.contains("the process ended"), "\(text)")
        #expect(text.contains("not normally"), "\(text)")
        #expect(text.split(separator: "\n").count < 40, "\(text)")
        #expect(text.hasSuffix("0 leaked, 602 unverified, 0 released late\n"), "\(text)")

        // JUnit and SARIF, as `check` writes them: one case and one result per cut process.
        let junit = try fixture.run(["leaks", "--format", "junit"]).output
        #expect(junit.components(separatedBy: "<testcase ").count - 1 == 4, "\(junit)")
        #expect(junit.components(separatedBy: "exit flush cut (200 nodes unverified)").count - 1 == 3, "\(junit)")
        let sarif = try fixture.run(["leaks", "--format", "sarif"]).output
        let log = try #require(try JSONSerialization.jsonObject(with: Data(sarif.utf8)) as? [String: Any])
        let results = try #require((log["runs"] as? [[String: Any]])?.first?["results"] as? [[String: Any]])
        #expect(results.count == 4)
        #expect(results.filter { ($0["properties"] as? [String: Any])?["exitFlushCut"] as? Bool == true }.count == 3)
    }
}
