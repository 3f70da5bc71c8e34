import CNodesMemory

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A one-bit wake-up for a background thread: `signal()` from anywhere, `wait(timeout:)` on the
/// thread. Built on a pthread mutex and a condition on the monotonic clock.
package final class ThreadSignal: @unchecked Sendable {
    // Unchecked because Synchronization has no condition variable to wait on with a timeout:
    // the pthread pair is the lock. The pointers are allocated once and only touched between
    // lock and unlock.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var raised = false

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        #if canImport(Glibc)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        #endif
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// Wakes the waiter, or makes its next wait return at once.
    package func signal() {
        pthread_mutex_lock(mutex)
        raised = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }

    /// Waits until signalled or until `nanoseconds` pass (forever when nil). Returns whether it
    /// was signalled, and clears the signal.
    @discardableResult
    package func wait(nanoseconds: UInt64?) -> Bool {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        if let nanoseconds {
            let deadline = MonotonicClock.now() &+ nanoseconds
            var spec = timespec(
                tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            while !raised {
                if pthread_cond_timedwait(condition, mutex, &spec) == ETIMEDOUT { break }
            }
        } else {
            while !raised { pthread_cond_wait(condition, mutex) }
        }
        let wasRaised = raised
        raised = false
        return wasRaised
    }
}

/// Starts a detached pthread that runs `body` once.
package enum BackgroundThread {
    private final class Body {
        let run: () -> Void
        init(run: @escaping () -> Void) {
            self.run = run
        }
    }

    /// Returns false when the system refused to create the thread. `name`, when given, is the
    /// thread's name as `top -H`, `ps -L` and profilers show it (at most 15 bytes).
    @discardableResult
    package static func start(named name: String? = nil, _ body: @escaping @Sendable () -> Void) -> Bool {
        let body: @Sendable () -> Void =
            if let name {
                {
                    cnm_name_thread(name)
                    body()
                }
            } else {
                body
            }
        let context = Unmanaged.passRetained(Body(run: body)).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { argument in
                guard let argument else { return nil }
                // Our threads never take SIGPIPE (a socket or pipe peer that went away must not kill
                // the host); every write of theirs handles EPIPE itself.
                var pipeOnly = sigset_t()
                sigemptyset(&pipeOnly)
                sigaddset(&pipeOnly, SIGPIPE)
                pthread_sigmask(SIG_BLOCK, &pipeOnly, nil)
                let body = Unmanaged<Body>.fromOpaque(argument).takeRetainedValue()
                body.run()
                return nil
            }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
