import Foundation
import Testing

/// Runs each test of a suite on threads of its own instead of Swift concurrency's cooperative
/// pool.
///
/// The tests that start child processes wait for them by blocking (`waitForExit`,
/// `waitForLine`, a socket read). On the cooperative pool, whose width is the number of cores,
/// two such tests on this 2-core machine hold every thread; the other tests wait in line while
/// the machine is half idle. Here each test body that blocks holds a thread of `TestThreads`
/// instead, at most `TestThreads.shared.width` at once, and the cooperative pool goes on with the
/// rest.
///
/// ```swift
/// @Suite(.offTheCooperativePool) struct SampleTests { … }
/// ```
public struct OffTheCooperativePool: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? {
        // A suite's own scope has nothing to run; each test case gets a scope of its own.
        testCase == nil ? nil : self
    }

    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        try await withTaskExecutorPreference(TestThreads.shared) { try await function() }
    }
}

extension Trait where Self == OffTheCooperativePool {
    /// Runs each test on `TestThreads` instead of the cooperative pool; for tests that block.
    public static var offTheCooperativePool: Self { OffTheCooperativePool() }
}

/// A task executor with threads of its own, for test bodies that block.
///
/// It starts a thread whenever a job arrives and no thread is idle, up to `width` threads; the
/// threads then stay, waiting for jobs. Jobs run in the order they arrive.
public final class TestThreads: TaskExecutor, @unchecked Sendable {
    // Unchecked because every stored property but `width` is guarded by `condition`.

    /// The one set of threads the tests share. Its width is `NODESCOPE_TEST_THREADS`, or 4: on
    /// two cores, beside the cooperative pool's two threads, enough tests at once to keep both
    /// cores busy while most of them wait for their child processes, and few enough that a
    /// test's child process still gets the processor time its deadlines allow, beside CPU hogs.
    public static let shared = TestThreads(
        width: ProcessInfo.processInfo.environment["NODESCOPE_TEST_THREADS"].flatMap { Int($0) }.map { max(1, $0) } ?? 4)

    /// The most threads that run jobs at once.
    public let width: Int

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var next = 0
    private var threads = 0
    private var idle = 0

    /// A set of at most `width` threads.
    public init(width: Int) {
        self.width = max(1, width)
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        let waiting = jobs.count - next
        if waiting > idle, threads < width {
            threads += 1
            let thread = Thread { [self] in work() }
            // As much stack as the main thread: a test body runs its synchronous calls here.
            thread.stackSize = 8 << 20
            thread.name = "test-threads-\(threads)"
            thread.start()
        } else {
            condition.signal()
        }
        condition.unlock()
    }

    /// A thread's life: take the oldest job, run it, again.
    private func work() {
        let executor = asUnownedTaskExecutor()
        while true {
            condition.lock()
            while next == jobs.count {
                idle += 1
                condition.wait()
                idle -= 1
            }
            let job = jobs[next]
            next += 1
            if next == jobs.count {
                jobs.removeAll(keepingCapacity: true)
                next = 0
            }
            condition.unlock()
            job.runSynchronously(on: executor)
        }
    }
}
