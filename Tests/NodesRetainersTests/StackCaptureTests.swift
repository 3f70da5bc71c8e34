import NodesTracking
import NodescopeWire
import Synchronization
import Testing

@testable import NodesRetainers

#if canImport(Glibc)
import Glibc
#endif

#if os(Linux)
/// A thread that runs (its stack pointer is in no `/proc` file) is read from where it was
/// interrupted, at one instant with the others: a frame that has returned is no holder, a frame
/// that runs is; a thread asleep is not woken.
@Suite(.serialized) struct StackCaptureTests {
    @Test func aFrameThatReturnedOnARunningThreadIsNoHolder() throws {
        let target = StaleTarget()
        let spinner = Spinner(name: "spinner-dead", address: ObfuscatedAddress(target), keepsInLiveFrame: false)
        spinner.start()
        defer { spinner.stop() }
        spinner.waitUntilSpinning()
        let frames = RetainerAnalysisTests().analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 41, objectIndex: 0)], attached: [], detached: [])
        let frame = try #require(frames.first)
        #expect(!frame.hops.contains { $0.reference.contains("spinner-dead") }, "\(frame)")
        #expect(RetainerAnalysisTests().noStructureHolds(frame), "\(frame)")
        withExtendedLifetime(target) {}
    }

    @Test func aFrameThatRunsOnARunningThreadIsAStackHolderNamedByItsThread() throws {
        let target = StaleTarget()
        let spinner = Spinner(name: "spinner-live", address: ObfuscatedAddress(target), keepsInLiveFrame: true)
        spinner.start()
        defer { spinner.stop() }
        spinner.waitUntilSpinning()
        // The capture waits a quarter of the analysis's time, 100 ms at most, for a thread to run
        // its handler; beside a whole test run on two cores the spinner may not run that soon,
        // and its stack is then read whole, by no thread's name. Asked up to three times.
        let frame = try #require(
            Self.explain(target, nodeID: 42) { $0.hops.first?.reference.contains("spinner-live") == true })
        #expect(frame.verdict == .stack, "\(frame)")
        #expect(frame.hops.first?.reference.contains("spinner-live") == true, "\(frame)")
        withExtendedLifetime(target) {}
    }

    /// glibc keeps the stacks of threads that ended for the threads to come (up to 40 MiB): such
    /// a stack is no thread's, and whatever its frames held is no holder.
    @Test func theStackOfAThreadThatEndedIsNoHolder() throws {
        let target = StaleTarget()
        let spinner = Spinner(name: "spinner-ended", address: ObfuscatedAddress(target), keepsInLiveFrame: true)
        spinner.start()
        spinner.waitUntilSpinning()
        spinner.stop()
        // The ended thread's stack would read as `thread stack local`, with no thread's name. (A
        // slot of a frame in use, on a thread or in a task, that its function has not written
        // yet may hold the address from an earlier object: a `stack` verdict, never a holder.)
        // A stack that is no thread's is left out once every thread's is placed: beside a whole
        // test run on two cores, a thread that does not run its handler within the capture's
        // 100 ms leaves the stacks unplaced, so the analysis is asked up to three times.
        let frame = try #require(
            Self.explain(target, nodeID: 44) { !($0.hops.first?.holderKind == .stack && $0.hops.first?.reference == "local") })
        let first = frame.hops.first
        #expect(!(first?.holderKind == .stack && first?.reference == "local"), "\(frame)")
        #expect(frame.verdict == .unknown || frame.verdict == .stack, "\(frame)")
        withExtendedLifetime(target) {}
    }

    /// Explains `target`, asked up to three times until `placed` holds: the capture waits a
    /// quarter of the analysis's time, 100 ms at most, for each thread to run its handler, and
    /// beside a whole test run on two cores a thread may not run that soon.
    private static func explain(
        _ target: StaleTarget, nodeID: UInt64, until placed: (RetainersFrame) -> Bool
    ) -> RetainersFrame? {
        var found: RetainersFrame?
        for _ in 0..<3 {
            found =
                RetainerAnalysisTests().analysis().explain(
                    [RetainerAnalysis.Target(target, nodeID: nodeID, objectIndex: 0)], attached: [], detached: []
                ).first
            if let found, placed(found) { break }
        }
        return found
    }

    @Test func aSleepingThreadIsNotWokenByTheCapture() throws {
        let sleeper = Sleeper()
        defer { sleeper.join() }
        // Wait until it sleeps, so that the analysis finds it in the call. While no analysis runs:
        // another test's analysis that read the thread list before the sleeper slept would look
        // at it again only right before its signal (the test below), and a sleep begun between
        // that look and the signal would be cut short (a loaded run met it once).
        RetainerAnalysis.withNoAnalysisRunning {
            sleeper.start()
            while !sleeper.isSleeping() { usleep(1_000) }
        }
        let target = StaleTarget()
        _ = RetainerAnalysisTests().analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 43, objectIndex: 0)], attached: [], detached: [])
        withExtendedLifetime(target) {}
        sleeper.join()
        #expect(sleeper.interrupted.load(ordering: .acquiring) == false)
    }

    /// A thread that was running when the thread list was read, and sleeps by the time its
    /// signal is due, is looked at again right before the signal and left out: its sleep is not
    /// cut short. (The capture is asked for it as the list read before it slept would have it.)
    @Test func aThreadThatWentToSleepSinceTheListWasReadIsLeftOut() throws {
        let sleeper = Sleeper()
        defer { sleeper.join() }
        var captured: [ProcessMemory.CapturedStack?]?
        RetainerAnalysis.withNoAnalysisRunning {
            sleeper.start()
            while !sleeper.isSleeping() { usleep(1_000) }
            captured = ProcessMemory.captureStacks(of: [sleeper.threadID], stackRanges: [], milliseconds: 100)
            if captured != nil { ProcessMemory.captureDone() }
        }
        let entries = try #require(captured)
        #expect(entries.count == 1 && entries[0] == nil)
        sleeper.join()
        #expect(sleeper.interrupted.load(ordering: .acquiring) == false)
    }

    /// The ranges the capture is given were read from `/proc/self/maps` a moment before, and a
    /// thread's stack may since have lost part of the range it was read in: the kernel shows a
    /// stack and a mapping next to it with the same permissions as one range, and the other
    /// mapping can be unmapped (a large block that `free` gives back) before the signal. A
    /// capture that copied the range's end with `memcpy` in the signal handler crashed the
    /// program (once in about 20 loaded runs of the test suite); it copies what is still there.
    /// Here the stale part is made unreadable for certain: a stack of the thread's own, its upper
    /// part PROT_NONE.
    @Test func aRangeThatLostItsUpperPartSinceItWasReadIsCopiedAsFarAsItIsThere() throws {
        let half = 1 << 20
        let mapping = try #require(
            mmap(nil, 2 * half, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0).flatMap { $0 == MAP_FAILED ? nil : $0 })
        let base = UInt(bitPattern: mapping)
        #expect(mprotect(mapping + half, half, PROT_NONE) == 0)
        let spinner = OwnStackSpinner(stack: mapping, size: half)
        var captured: [ProcessMemory.CapturedStack?]?
        RetainerAnalysis.withNoAnalysisRunning {
            spinner.start()
            while spinner.threadID == 0 { usleep(1_000) }
            captured = ProcessMemory.captureStacks(
                of: [spinner.threadID], stackRanges: [(start: base, end: base + UInt(2 * half))], milliseconds: 1_000)
        }
        let entries = try #require(captured)
        defer { ProcessMemory.captureDone() }
        spinner.stop()
        #expect(entries.count == 1)
        let stack = try #require(entries.first ?? nil, "the spinner's stack was copied")
        #expect(stack.stackPointer >= base && stack.stackPointer < base + UInt(half))
        #expect(stack.end == base + UInt(half), "the copy ends where the readable part does")
        munmap(mapping, 2 * half)
    }

    /// A thread blocked in one `send` of more than the socket holds is not interrupted: an
    /// interrupted send that had sent some bytes returns their count, and a program that sends
    /// in one call (a test's raw socket did) would lose the rest.
    @Test func aThreadBlockedInASendIsNotCutShortByTheCapture() throws {
        let sender = BlockedSender(bytes: 4 << 20)
        defer { sender.finish() }
        // Into its send while no analysis runs: until it blocks, the sender runs in the call, and
        // another test's analysis beside this one would interrupt it (runs cut its send at
        // 438,528 bytes, and at 911,232). Blocked, every analysis leaves it alone.
        RetainerAnalysis.withNoAnalysisRunning {
            sender.start()
            var waited = 0
            while !sender.isBlockedInSend(), waited < 10_000 {
                usleep(1_000)
                waited += 1
            }
        }
        try #require(sender.isBlockedInSend(), "the sender never blocked in its send")
        let target = StaleTarget()
        _ = RetainerAnalysisTests().analysis().explain(
            [RetainerAnalysis.Target(target, nodeID: 44, objectIndex: 0)], attached: [], detached: [])
        withExtendedLifetime(target) {}
        // Drained while no analysis runs either: the sender runs again as the socket drains.
        var sent = 0
        RetainerAnalysis.withNoAnalysisRunning { sent = sender.finish() }
        #expect(sent == 4 << 20)
    }
}

/// Sends `bytes` in one blocking `send` on a socket whose other end reads only when told to.
final class BlockedSender: @unchecked Sendable {
    // Unchecked: the descriptors and the handle are touched only by the test's thread.
    private let bytes: Int
    private var ends: [Int32] = [-1, -1]
    private let sent = Atomic<Int>(-2)
    private let inCall = Atomic<Int>(0)
    private var thread = pthread_t()
    private var started = false

    init(bytes: Int) { self.bytes = bytes }

    func start() {
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { return }
        // A small buffer: the send blocks sooner.
        var small: Int32 = 4_096
        _ = setsockopt(ends[0], SOL_SOCKET, SO_SNDBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        started = true
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                let sender = Unmanaged<BlockedSender>.fromOpaque(argument!).takeRetainedValue()
                // Made first, so that the call that `/proc` shows next is the send.
                let payload = [UInt8](repeating: 7, count: sender.bytes)
                sender.inCall.store(ProcessMemory.currentThreadID, ordering: .releasing)
                let count = payload.withUnsafeBytes { send(sender.ends[0], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                sender.sent.store(count, ordering: .releasing)
                return nil
            }, argument)
    }

    /// Whether the thread is blocked in its send (as `/proc` shows it: in a call that the
    /// capture leaves alone, not in a page fault's or an allocation's).
    func isBlockedInSend() -> Bool {
        let id = inCall.load(ordering: .acquiring)
        guard id != 0, sent.load(ordering: .acquiring) == -2 else { return false }
        return ThreadList.read().first { $0.id == id }?.call.map { ProcessMemory.interruptShows(inCall: $0) } ?? false
    }

    /// Reads everything sent until the send returns, and returns what it returned (-2 without
    /// a socket).
    @discardableResult
    func finish() -> Int {
        guard started else { return -2 }
        started = false
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while sent.load(ordering: .acquiring) == -2 {
            var entry = pollfd(fd: ends[1], events: Int16(POLLIN), revents: 0)
            if poll(&entry, 1, 50) > 0 { _ = recv(ends[1], &buffer, buffer.count, 0) }
        }
        pthread_join(thread, nil)
        close(ends[0])
        close(ends[1])
        return sent.load(ordering: .acquiring)
    }
}

/// Spins without a call in its loop (so it runs when the analysis comes) after planting the
/// target's address in a frame: one that has returned, or the one it spins in.
final class Spinner: @unchecked Sendable {
    // Unchecked: the pthread handle is touched only by the test's thread.
    private let name: String
    private let address: ObfuscatedAddress
    private let keepsInLiveFrame: Bool
    private let spinning = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private var thread = pthread_t()

    init(name: String, address: ObfuscatedAddress, keepsInLiveFrame: Bool) {
        (self.name, self.address, self.keepsInLiveFrame) = (name, address, keepsInLiveFrame)
    }

    func start() {
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                Unmanaged<Spinner>.fromOpaque(argument!).takeRetainedValue().run()
                return nil
            }, argument)
    }

    func waitUntilSpinning() {
        while !spinning.load(ordering: .acquiring) { usleep(1_000) }
    }

    func stop() {
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
    }

    @inline(never)
    private func run() {
        let comm = open("/proc/self/task/\(ProcessMemory.currentThreadID)/comm", O_WRONLY)
        if comm >= 0 {
            _ = name.withCString { write(comm, $0, strlen($0)) }
            close(comm)
        }
        if keepsInLiveFrame {
            spinHolding()
        } else {
            plant(depth: 40)
            spin()
        }
    }

    /// Fills a frame `depth` calls down with the address, then returns: the words stay below the
    /// stack pointer, deeper than the spin's calls reach.
    @inline(never)
    private func plant(depth: Int) {
        if depth > 0 {
            plant(depth: depth - 1)
            return
        }
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: 64) { buffer in
            for index in buffer.indices { buffer[index] = address.address }
            Self.use(buffer)
        }
    }

    /// Keeps the stores that fill `buffer` (nothing else reads it).
    @inline(never)
    private static func use(_ buffer: UnsafeMutableBufferPointer<UInt>) {}

    @inline(never)
    private func spinHolding() {
        withUnsafeTemporaryAllocation(of: UInt.self, capacity: 64) { buffer in
            for index in buffer.indices { buffer[index] = address.address }
            Self.use(buffer)
            spin()
            // Read after the spin, so the words are live while it spins.
            for index in buffer.indices where buffer[index] == 0 { print(index) }
        }
    }

    @inline(never)
    private func spin() {
        spinning.store(true, ordering: .releasing)
        while !stopping.load(ordering: .relaxed) {}
    }
}

/// Spins on a stack it is given until stopped.
final class OwnStackSpinner: @unchecked Sendable {
    private let stack: UnsafeMutableRawPointer
    private let size: Int
    private let id = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)
    private var thread = pthread_t()

    init(stack: UnsafeMutableRawPointer, size: Int) {
        (self.stack, self.size) = (stack, size)
    }

    func start() {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstack(&attributes, stack, size)
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, &attributes,
            { argument in
                let spinner = Unmanaged<OwnStackSpinner>.fromOpaque(argument!).takeRetainedValue()
                spinner.id.store(ProcessMemory.currentThreadID, ordering: .releasing)
                while !spinner.stopping.load(ordering: .relaxed) {}
                return nil
            }, argument)
    }

    /// The kernel's id of the thread, once it has started (else 0).
    var threadID: Int { id.load(ordering: .acquiring) }

    func stop() {
        stopping.store(true, ordering: .releasing)
        pthread_join(thread, nil)
    }
}

/// Sleeps 300 ms in `nanosleep` and says whether the sleep was cut short.
final class Sleeper: @unchecked Sendable {
    let interrupted = Atomic<Bool>(false)
    private let asleep = Atomic<Int>(0)
    private var thread = pthread_t()
    private var joined = false

    func start() {
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                let sleeper = Unmanaged<Sleeper>.fromOpaque(argument!).takeRetainedValue()
                sleeper.asleep.store(ProcessMemory.currentThreadID, ordering: .releasing)
                var request = timespec(tv_sec: 0, tv_nsec: 300_000_000)
                var left = timespec()
                if nanosleep(&request, &left) != 0 { sleeper.interrupted.store(true, ordering: .releasing) }
                return nil
            }, argument)
    }

    /// The kernel's id of the thread, once it has started (else 0).
    var threadID: Int { asleep.load(ordering: .acquiring) }

    /// Whether the thread is in its sleep (as `/proc` shows it).
    func isSleeping() -> Bool {
        let id = asleep.load(ordering: .acquiring)
        guard id != 0 else { return false }
        return ThreadList.read().first { $0.id == id }?.call.map { ProcessMemory.interruptShows(inCall: $0) } ?? false
    }

    func join() {
        guard !joined else { return }
        joined = true
        pthread_join(thread, nil)
    }
}
#endif
