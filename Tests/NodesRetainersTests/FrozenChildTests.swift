import Foundation
import NodesTracking
import ProcessTestSupport
import Testing

@testable import NodesRetainers

#if canImport(Glibc)
import Glibc
#endif

/// The forked child that analyses run in: it answers, it is killed past its deadline, what goes
/// wrong in it never reaches the parent, and it runs nothing of the host's (no signal handler, no
/// descriptor).
@Suite(.offTheCooperativePool) struct FrozenChildTests {
    /// `work` in a child; asked again, up to three times, while the child is found waiting on a
    /// lock that another thread held at the fork (`.blocked`). Beside a whole test run's threads
    /// (other analyses among them) a child's first steps can meet such a lock: loaded run 2 of
    /// 7e9c930bc707 saw it in `theChildAnswersWithWhatItReadInTheMemoryOfTheFork`, and a
    /// clean-clone run once before (then found only at the deadline). What these tests check is
    /// what the child does once it runs; the lock is `aChildWaitingOnALock…`'s.
    private func run(within milliseconds: UInt64 = 10_000, _ work: () -> [UInt8]) -> FrozenChild.Outcome {
        var outcome = FrozenChild.Outcome.blocked
        for _ in 0..<3 {
            outcome = FrozenChild.run(until: MonotonicClock.now() + milliseconds * 1_000_000, clock: { MonotonicClock.now() }, work)
            guard case .blocked = outcome else { return outcome }
        }
        return outcome
    }

    @Test func theChildAnswersWithWhatItReadInTheMemoryOfTheFork() {
        // Written before the fork, changed after it: the child sees the value of the fork.
        let box = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        defer { box.deallocate() }
        box.pointee = 7
        let outcome = run { [box.pointee, UInt8(truncatingIfNeeded: getpid() == getppid() ? 0 : 1)] + Array(repeating: 9, count: 200_000) }
        box.pointee = 8
        guard case .answer(let bytes) = outcome else {
            Issue.record("no answer: \(outcome)")
            return
        }
        // An answer larger than a pipe's buffer arrives whole.
        #expect(bytes.count == 200_002)
        #expect(Array(bytes.prefix(2)) == [7, 1])
    }

    @Test func aChildThatNeverAnswersIsKilledAtItsDeadline() {
        let start = MonotonicClock.now()
        let outcome = run(within: 300) {
            while true { usleep(10_000) }
        }
        let elapsed = (MonotonicClock.now() - start) / 1_000_000
        guard case .timedOut(let activity) = outcome else {
            Issue.record("not timed out: \(outcome)")
            return
        }
        #expect(elapsed >= 250 && elapsed < 5_000, "\(elapsed) ms")
        // What it was doing, for the note: asleep in `clock_nanosleep` (or, caught between two
        // sleeps, running); never taken for a wait on a lock.
        #expect(activity.hasPrefix("blocked in system call ") || activity == "running", "\(activity)")
    }

    /// A lock that another thread held at the fork is held forever in the child, which has that
    /// thread no more: a child that waits on one is killed as soon as it is seen (the analysis then
    /// copies the memory instead), not at its deadline.
    @Test func aChildWaitingOnALockThatAThreadHeldAtTheForkIsKilledAtOnce() {
        let lock = HeldLock()
        let (locked, release, released) = (DispatchSemaphore(value: 0), DispatchSemaphore(value: 0), DispatchSemaphore(value: 0))
        Thread {
            pthread_mutex_lock(lock.mutex)
            locked.signal()
            release.wait()
            pthread_mutex_unlock(lock.mutex)
            released.signal()
        }.start()
        locked.wait()
        // A deadline far off: only the lock, seen, ends the wait early.
        let takesTheLock: () -> [UInt8] = {
            pthread_mutex_lock(lock.mutex)
            return [1]
        }
        let outcome = FrozenChild.run(until: MonotonicClock.now() + 120_000_000_000, clock: { MonotonicClock.now() }, takesTheLock)
        release.signal()
        released.wait()
        guard case .blocked = outcome else {
            Issue.record("not blocked: \(outcome)")
            return
        }
    }

    @Test func aChildThatCrashesEndsWithoutAnswerAndThisProcessGoesOn() {
        let outcome = run {
            // A read of an unmapped address: a fault that only the child takes.
            let nowhere = UnsafePointer<UInt>(bitPattern: 8)!
            return [UInt8(truncatingIfNeeded: nowhere.pointee)]
        }
        guard case .died = outcome else {
            Issue.record("not died: \(outcome)")
            return
        }
    }

    @Test func theChildRunsNoSignalHandlerOfTheHostAndKeepsNoDescriptorOfIt() throws {
        var ends: [Int32] = [-1, -1]
        #expect(pipe(&ends) == 0)
        defer {
            close(ends[0])
            close(ends[1])
        }
        var handler = sigaction()
        handler.__sigaction_handler.sa_handler = { _ in }
        var previous = sigaction()
        sigaction(SIGUSR2, &handler, &previous)
        defer { sigaction(SIGUSR2, &previous, nil) }
        let probe: () -> [UInt8] = {
            var current = sigaction()
            sigaction(SIGUSR2, nil, &current)
            let isDefault = unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == 0
            let descriptorsGone = fcntl(ends[0], F_GETFD) == -1 && fcntl(ends[1], F_GETFD) == -1
            return [isDefault ? 1 : 0, descriptorsGone ? 1 : 0]
        }
        // (A child that meets a lock held at the fork is asked again: ``run(within:_:)``.)
        let outcome = run(probe)
        guard case .answer(let bytes) = outcome else {
            Issue.record("no answer: \(outcome)")
            return
        }
        #expect(bytes == [1, 1], "[handler back to the default, descriptors closed]")
    }
}

extension RetainerAnalysisTests {
    /// The analysis forks by default and copies nothing; copying instead (where a fork is
    /// refused) gives the same answer.
    @Test func anAnalysisInAForkedChildCopiesNothingAndAnswersAsACopyDoes() throws {
        let (front, back) = CycleBack.pair()
        let list = ListenerList()
        let context = ListeningContext()
        list.listeners.append { [context] _ in context.received += 1 }
        var answers: [[String]] = []
        for inChild in [true, false] {
            let analysis = analysis(inChild: inChild)
            let explain = {
                analysis.explain(
                    [
                        RetainerAnalysis.Target(front, nodeID: 1, objectIndex: 0),
                        RetainerAnalysis.Target(context, nodeID: 2, objectIndex: 0),
                    ],
                    attached: [RetainerAnalysis.NodeObject(list, nodeID: 20)],
                    detached: [RetainerAnalysis.NodeObject(back, nodeID: 1)])
            }
            var frames = explain()
            // A child that meets a lock held at the fork leaves the analysis to a copy
            // (`childWaitedOnLock`): asked again, up to twice more, for a child that runs.
            for _ in 0..<2 where analysis.lastRun.childWaitedOnLock { frames = explain() }
            #expect(frames.map(\.verdict) == [.cycle, .holder], "\(frames)")
            #expect((analysis.lastRun.bytesCopied == 0) == inChild, "in a child: \(inChild), copied \(analysis.lastRun.bytesCopied)")
            #expect(analysis.lastRun.blocks > 0 && analysis.lastRun.blocksScanned > 0)
            answers.append(frames.flatMap(lines))
        }
        #expect(answers[0] == answers[1])
        withExtendedLifetime((front, back, list, context)) {}
    }
}

/// A mutex at a fixed address, shared by threads.
private final class HeldLock: @unchecked Sendable {
    let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)

    init() { pthread_mutex_init(mutex, nil) }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }
}
