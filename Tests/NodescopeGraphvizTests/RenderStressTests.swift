import Foundation
import ProcessTestSupport
import SeededRandom
import Synchronization
import Testing

@testable import NodescopeGraphviz

/// Graphviz 2.42 is not thread-safe and leaks easily: these run many renders, alone and from
/// many threads at once, and print the memory they cost.
@Suite("Many renders", .serialized, .offTheCooperativePool)
struct RenderStressTests {
    /// Resident memory of this process in bytes, from /proc/self/statm.
    static func residentBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    @Test("1,000 renders in a row")
    func thousandRenders() throws {
        let diagram = SampleDiagrams.allStates
        // Warm up once, so the context and its plugins are not counted as growth.
        _ = try DiagramRenderer.shared.render(diagram, format: .svg)
        _ = try DiagramRenderer.shared.render(diagram, format: .svg, options: .init(layout: .tidy))
        let before = Self.residentBytes()
        var first = ""
        for index in 0..<1_000 {
            let svg = try DiagramRenderer.shared.render(diagram, format: .svg, options: .init(layout: index % 2 == 0 ? .dot : .tidy))
            if index == 0 { first = svg }
            if index % 2 == 0 { #expect(svg == first) }
        }
        let after = Self.residentBytes()
        let growth = Double(after - before) / 1_048_576
        print(
            "1,000 renders: resident \(before / 1_048_576) MB before, \(after / 1_048_576) MB after, growth \(String(format: "%.1f", growth)) MB"
        )
        #expect(after - before < 200 * 1_048_576)
    }

    @Test("600 renders of varied diagrams, both engines and both label styles")
    func variedRenders() throws {
        // Graphviz 2.42 keeps wrapping counters in its layout engines; some graph shapes have
        // crashed it only after a few hundred earlier, different layouts.
        let nasty = ["<script>", "&#0; &foo;", "\"q\" \\N", "nul\u{0}", "line\nbreak", "🚀 日本語"]
        let hostile = Diagram(
            title: nasty.joined(separator: " "),
            nodes: nasty.enumerated().map { index, name in
                DiagramNode(
                    id: UInt64(index + 1), parent: index == 0 ? nil : 1, title: name, kind: name,
                    parts: [name], releasedParts: [name], state: .leaked, note: name)
            })
        var jobs: [(dot: String, engine: String)] = []
        for diagram in [
            SampleDiagrams.allStates, hostile, SampleDiagrams.randomTree(count: 40, seed: 9),
            SampleDiagrams.randomTree(count: 120, seed: 5, statesEvery: 9),
        ] {
            for rich in [true, false] {
                jobs.append((DotWriter.dot(for: diagram, positions: nil, richLabels: rich), "dot"))
                jobs.append((DotWriter.dot(for: diagram, positions: TidyLayout.layout(diagram), richLabels: rich), "nop2"))
            }
        }
        var random = SplitMix64(seed: 1)
        for _ in 0..<600 {
            let job = jobs[Int(random.next() % UInt64(jobs.count))]
            #expect(SVGDocument(try GraphvizContext.renderSVG(dot: job.dot, engine: job.engine)).parseError == nil)
        }
    }

    @Test("8 threads rendering at once get the same drawings as one thread")
    func eightThreads() throws {
        let small = SampleDiagrams.allStates
        let medium = SampleDiagrams.randomTree(count: 120, seed: 5, statesEvery: 9)
        let expectedSmall = try DiagramRenderer.shared.render(small, format: .svg)
        let expectedMedium = try DiagramRenderer.shared.render(medium, format: .svg, options: .init(layout: .tidy))

        let failures = Mutex<[String]>([])
        let group = DispatchGroup()
        for thread in 0..<8 {
            group.enter()
            let worker = Thread {
                defer { group.leave() }
                for round in 0..<20 {
                    do {
                        if (thread + round) % 2 == 0 {
                            let svg = try DiagramRenderer.shared.render(small, format: .svg)
                            if svg != expectedSmall { failures.withLock { $0.append("thread \(thread) round \(round): small differs") } }
                        } else {
                            let svg = try DiagramRenderer.shared.render(medium, format: .svg, options: .init(layout: .tidy))
                            if svg != expectedMedium { failures.withLock { $0.append("thread \(thread) round \(round): medium differs") } }
                        }
                    } catch {
                        failures.withLock { $0.append("thread \(thread) round \(round): \(error)") }
                    }
                }
            }
            worker.stackSize = 4 << 20
            worker.start()
        }
        group.wait()
        #expect(failures.withLock { $0 } == [])
    }
}
