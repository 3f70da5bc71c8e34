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

/// An object that an async function's local keeps, which keeps a `FrameLocal`.
final class FrameBox {
    let local = FrameLocal()

    /// Hands `local`'s address over, out of the caller's frame (so that no slot of an async
    /// caller's frame keeps `local` itself).
    @inline(never) func hand(to handoff: AddressHandoff) { handoff.hand(local) }
}

/// An address handed from a task to the test, inverted so that no word of it is a reference
/// (and computed out of the async callers' frames, so that none of their slots holds it raw).
final class AddressHandoff: Sendable {
    private let inverted = Atomic<UInt>(0)
    /// Whether the task's child is about to block its thread.
    let childBlocks = Atomic<Bool>(false)

    @inline(never) func hand(_ object: AnyObject) {
        inverted.store(~UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()), ordering: .releasing)
    }

    /// The address handed over, obfuscated as the tracker keeps it; nil until there is one.
    @inline(never) func received() -> ObfuscatedAddress? {
        let bits = inverted.load(ordering: .acquiring)
        return bits == 0 ? nil : ObfuscatedAddress(address: ~bits)
    }
}

extension RetainerAnalysisTests {
    /// An object that only a local of an async function keeps (in its task's frame, across a
    /// suspension) is held by code that has not finished, as a thread's local is: a `stack`
    /// verdict, whatever leads to the task (here the stack of the thread that a child of the
    /// task blocks, through the child's task), never a holder.
    @Test func anObjectOnlyAnAsyncFunctionsLocalKeepsIsAStackVerdict() async throws {
        let found = try #require(await explainLocalOfASuspendedTask(boxed: false))
        #expect(found.verdict == .stack, "\(found.verdict): \(lines(found))")
    }

    /// The same through an object that the local keeps: the path goes on past the task's frame
    /// (`async frames → FrameBox .local → FrameLocal`), and what keeps the object is still code
    /// in flight, which a conservative scan cannot tell from a frame's slot not written yet: a
    /// `stack` verdict, summed up as held by an async task, never a holder.
    @Test func anObjectThatAnAsyncFunctionsLocalLeadsToIsAStackVerdict() async throws {
        let found = try #require(await explainLocalOfASuspendedTask(boxed: true))
        #expect(found.verdict == .stack, "\(found.verdict): \(lines(found))")
        // Through the task's frame; or, where a thread's stack still holds the object's address
        // in a slot that an earlier call left there (the thread that ran `hand(to:)`, parked in
        // a live frame since: loaded run 1 of 1f5cd8c91a31 found `thread stack local` alone),
        // straight from that slot, the shorter path. Either is code in flight.
        let throughTheTask = found.hops.contains { $0.holder.hasPrefix("async ") }
        let fromAThreadsSlot = found.hops.count == 1 && found.hops[0].holderKind == .stack
        #expect(throughTheTask || fromAThreadsSlot, "\(lines(found))")
        // Through the box, or straight from a slot of the frame that still holds the object's
        // address (a clean-clone run once found `async frames` last): a conservative scan cannot
        // tell the two apart, and either is code in flight.
        let last = found.hops.last?.holder ?? ""
        #expect(!throughTheTask || last == "FrameBox" || last.hasPrefix("async "), "\(lines(found))")
    }

    /// Explains the `FrameLocal` that a suspended task keeps in a local, or in a `FrameBox` in
    /// a local (`boxed`), while a child of the task blocks a thread.
    private func explainLocalOfASuspendedTask(boxed: Bool) async throws -> RetainersFrame? {
        var gate: [Int32] = [-1, -1]
        try #require(pipe(&gate) == 0)
        defer {
            close(gate[0])
            close(gate[1])
        }
        let readEnd = gate[0]
        let handoff = AddressHandoff()
        return await withTaskGroup(of: Void.self) { group -> RetainersFrame? in
            group.addTask {
                let box: FrameBox? = boxed ? FrameBox() : nil
                let local = boxed ? nil : FrameLocal()
                if let box { box.hand(to: handoff) } else if let local { handoff.hand(local) }
                // Suspended while a child of its own blocks a thread: the local is in its frame
                // alone, which the child's task leads to (its parent).
                await withTaskGroup(of: Void.self) { inner in
                    inner.addTask {
                        handoff.childBlocks.store(true, ordering: .releasing)
                        var byte: UInt8 = 0
                        _ = read(readEnd, &byte, 1)
                    }
                    await inner.waitForAll()
                }
                withExtendedLifetime((box, local)) {}
            }
            var address: ObfuscatedAddress?
            while address == nil || !handoff.childBlocks.load(ordering: .acquiring) {
                usleep(1_000)
                address = handoff.received()
            }
            // Give the child the time to block in its read (the path to the task starts at the
            // stack of the thread it blocks). On a loaded machine (a CI run where the whole test
            // process waited minutes for its threads) it may not be there yet, and the stack of
            // the thread on its way holds other words: asked again, a little later each time, up
            // to five times, while the child waits (a verdict wrong once the child blocks fails
            // all five).
            var frames: [RetainersFrame]?
            for attempt in 1...5 {
                usleep(20_000 * UInt32(attempt))
                frames = address.map {
                    analysis().explain(
                        [RetainerAnalysis.Target(nodeID: 12, objectIndex: 0, address: $0, typeName: "FrameLocal")], attached: [],
                        detached: [])
                }
                // Boxed, asked again while the path is not through the task (a thread's stale
                // slot, which a later call may overwrite, is the shorter path).
                if let frame = frames?.first, frame.verdict == .stack,
                    !boxed || frame.hops.contains(where: { $0.holder.hasPrefix("async ") })
                {
                    break
                }
            }
            var byte: UInt8 = 1
            _ = write(gate[1], &byte, 1)
            await group.waitForAll()
            return frames?.first
        }
    }
}
#endif
