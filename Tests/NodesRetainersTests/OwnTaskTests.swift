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
        let ownTask = withUnsafeCurrentTask { task in task.map { unsafeBitCast($0, to: UInt.self) } } ?? 0
        var blocks: [UInt] = []
        let frame = await withTaskGroup(of: Void.self) { group -> RetainersFrame? in
            group.addTask {
                started.value.store(true, ordering: .releasing)
                var byte: UInt8 = 0
                _ = read(readEnd, &byte, 1)
            }
            while !started.value.load(ordering: .acquiring) { usleep(1_000) }
            // In this process, so that the blocks of the path are known.
            let inProcess = analysis(inChild: false)
            let frames = inProcess.explain([RetainerAnalysis.Target(target, nodeID: 4, objectIndex: 0)], attached: [], detached: [])
            blocks = inProcess.lastPathBlocks[0] ?? []
            var byte: UInt8 = 1
            _ = write(gate[1], &byte, 1)
            await group.waitForAll()
            return frames.first
        }
        let found = try #require(frame)
        // No path through this task: its frames, where the object is, are the caller's. (In a
        // busy process, a slot of another task's frame that its function has not written yet
        // may hold the address from an earlier object there: a local of running code, a
        // `stack` verdict, never a holder. CHECK.md, "What it cannot leave out".)
        #expect(!blocks.contains(ownTask), "\(lines(found))")
        #expect(found.verdict == .unknown || found.verdict == .stack, "\(lines(found))")
        withExtendedLifetime(target) {}
    }
}
#endif
