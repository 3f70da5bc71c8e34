import NodesDebug
import Synchronization

@testable import NodesRetainers
@testable import NodesTracking

#if canImport(Glibc)
import Glibc
#endif

// The objects of the retainer analysis's tests: each way of keeping an object alive gets its own
// types, so that the hop names the tests expect are unambiguous.

/// 1. Two objects of a detached node that keep each other.
final class CycleFront {
    var back: CycleBack?
}

final class CycleBack {
    var front: CycleFront?

    /// A front and a back that keep each other.
    static func pair() -> (CycleFront, CycleBack) {
        let (front, back) = (CycleFront(), CycleBack())
        (front.back, back.front) = (back, front)
        return (front, back)
    }
}

/// 2. A long-lived owner of callbacks.
final class ListenerList {
    var listeners: [(String) -> Void] = []
}

/// What a callback captures.
final class ListeningContext {
    var received = 0
}

/// 3. A long-lived owner of objects by name.
final class NamedCache {
    var table: [String: AnyObject] = [:]
}

/// What the cache keeps.
final class CachedProfile {}

/// 4. A singleton that keeps the object it was last given.
final class ActivityCenter: @unchecked Sendable {
    static let shared = ActivityCenter()
    var current: AnyObject?
}

/// What the singleton keeps.
final class CurrentActivity {}

/// 5. What a global keeps.
final class GlobalFlow: Sendable {}

/// 5. The global.
let retainedByGlobal = GlobalFlow()

/// 6. What only another thread's stack keeps.
final class StackPayload {
    var value = 6
}

/// An object nothing keeps but the test's own (excluded) stack. Large (256 KiB, so malloc maps
/// it on its own), so that its address is not one that earlier objects had: a dead copy of an
/// earlier object's address (in a frame that has not overwritten it yet) would read as a holder.
final class UnheldBuffer: ManagedBuffer<Int, UInt8> {
    /// A new buffer.
    static func make() -> UnheldBuffer {
        // `create` returns the dynamic type it is called on.
        UnheldBuffer.create(minimumCapacity: 256 * 1_024) { _ in 0 } as! UnheldBuffer
    }
}

/// A thread that makes a ``StackPayload``, keeps it in a local and waits until it is let go.
final class StackHolderThread: @unchecked Sendable {
    // Unchecked: the pthread handle is touched only by the test's thread.
    /// The payload's address and type name, once the thread has made it.
    let published = Mutex<(address: ObfuscatedAddress, typeName: String)?>(nil)
    /// The thread blocks reading this pipe (so that its stack pointer is known) until `stop`.
    private var gate: [Int32] = [-1, -1]
    private var thread = pthread_t()
    /// Makes the object the thread keeps in its local.
    private let make: @Sendable () -> AnyObject
    /// The other objects the thread's object keeps, once made (their addresses).
    let others = Mutex<[ObfuscatedAddress]>([])

    /// A thread that keeps what `make` returns (a ``StackPayload`` by default).
    init(make: @escaping @Sendable () -> AnyObject = { StackPayload() }) {
        self.make = make
    }

    /// Starts the thread.
    func start() {
        pipe(&gate)
        let argument = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread, nil,
            { argument in
                let holder = Unmanaged<StackHolderThread>.fromOpaque(argument!).takeRetainedValue()
                holder.run()
                return nil
            }, argument)
    }

    /// Waits until the payload is published, and returns it.
    func waitForPayload() -> (address: ObfuscatedAddress, typeName: String) {
        while true {
            if let published = published.withLock({ $0 }) { return published }
            usleep(1_000)
        }
    }

    /// Lets the thread end, and joins it.
    func stop() {
        var byte: UInt8 = 1
        _ = write(gate[1], &byte, 1)
        pthread_join(thread, nil)
        close(gate[0])
        close(gate[1])
    }

    @inline(never)
    private func run() {
        let name = open("/proc/self/task/\(ProcessMemory.currentThreadID)/comm", O_WRONLY)
        if name >= 0 {
            _ = write(name, "stack-holder", 12)
            close(name)
        }
        let payload = make()
        if let front = payload as? CycleFront, let back = front.back { others.withLock { $0 = [ObfuscatedAddress(back)] } }
        published.withLock { $0 = (ObfuscatedAddress(payload), String(describing: type(of: payload))) }
        withExtendedLifetime(payload) {
            var byte: UInt8 = 0
            _ = read(gate[0], &byte, 1)
        }
    }
}

/// A view that keeps its view model, whose callback keeps the view: a cycle through a closure
/// whose only capture is the view (so its context is the view itself).
final class CallbackView {
    var model: CallbackModel?
    var text = ""
}

/// The view model of ``CallbackView``.
final class CallbackModel {
    var onChange: ((String) -> Void)?
}
