import NodesDebug
import NodesRetainers
import NodesTracking
import NodescopeWire
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc

/// What an async function keeps in a local across a suspension.
final class FrameLocal {}

/// An address handed from a task to the test, obfuscated as the tracker keeps it.
final class AddressHandoff: Sendable {
    let bits = Atomic<UInt>(0)
}

extension RetainerAnalysisTests {
    /// An object that only a local of an async function keeps (in its task's frame, across a
    /// suspension) is held by code that has not finished, as a thread's local is: a `stack`
    /// verdict, whatever leads to the task (here the stack of the thread that a child of the
    /// task blocks, through the child's task), never a holder.
    @Test func anObjectOnlyAnAsyncFunctionsLocalKeepsIsAStackVerdict() async throws {
        var gate: [Int32] = [-1, -1]
        try #require(pipe(&gate) == 0)
        defer {
            close(gate[0])
            close(gate[1])
        }
        let readEnd = gate[0]
        let handoff = AddressHandoff()
        let frame = await withTaskGroup(of: Void.self) { group -> RetainersFrame? in
            group.addTask {
                let local = FrameLocal()
                handoff.bits.store(ObfuscatedAddress(local).address, ordering: .releasing)
                // Suspended while a child of its own blocks a thread: the local is in its frame
                // alone, which the child's task leads to (its parent).
                await withTaskGroup(of: Void.self) { inner in
                    inner.addTask {
                        var byte: UInt8 = 0
                        _ = read(readEnd, &byte, 1)
                    }
                    await inner.waitForAll()
                }
                withExtendedLifetime(local) {}
            }
            var address: ObfuscatedAddress?
            while address == nil {
                usleep(1_000)
                let bits = handoff.bits.load(ordering: .acquiring)
                if bits != 0 { address = ObfuscatedAddress(address: bits) }
            }
            // Give the task the time to block in its read.
            usleep(20_000)
            let frames = address.map {
                analysis().explain(
                    [RetainerAnalysis.Target(nodeID: 12, objectIndex: 0, address: $0, typeName: "FrameLocal")], attached: [],
                    detached: [])
            }
            var byte: UInt8 = 1
            _ = write(gate[1], &byte, 1)
            await group.waitForAll()
            return frames?.first
        }
        let found = try #require(frame)
        #expect(found.verdict == .stack, "\(found.verdict): \(lines(found))")
    }
}
#endif
