import NodesDebug
import NodesRetainers
import NodescopeWire
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc

/// Set once a task has started.
final class StartFlag: Sendable {
    let value = Atomic<Bool>(false)
}

extension RetainerAnalysisTests {
    /// An analysis run from an async task leaves out that task's frames and its parents', as it
    /// leaves out the calling thread's stack: what the caller keeps in its own locals is not a
    /// holder. Here the object lives in this test's async frame (across a suspension), and a
    /// child task that blocks its thread leads there (its thread's stack holds the child, the
    /// child its parent). Found as `thread stack → async task +208 → … → async frames +304`
    /// paths to test objects whose address an earlier frame's stale word held.
    @Test func theAnalyzingTasksOwnFramesAreNoHolder() async throws {
        let target = StaleTarget()
        await Task.yield()
        var gate: [Int32] = [-1, -1]
        try #require(pipe(&gate) == 0)
        defer {
            close(gate[0])
            close(gate[1])
        }
        let started = StartFlag()
        let readEnd = gate[0]
        let frame = await withTaskGroup(of: Void.self) { group -> RetainersFrame? in
            group.addTask {
                started.value.store(true, ordering: .releasing)
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
            while !started.value.load(ordering: .acquiring) { usleep(1_000) }
            let frames = analysis().explain([RetainerAnalysis.Target(target, nodeID: 4, objectIndex: 0)], attached: [], detached: [])
            var byte: UInt8 = 1
            _ = write(gate[1], &byte, 1)
            await group.waitForAll()
            return frames.first
        }
        let found = try #require(frame)
        #expect(found.verdict == .unknown, "\(lines(found))")
        withExtendedLifetime(target) {}
    }
}
#endif
