import CNodesMemory
import NodesTracking

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's own memory, read safely, and the names the dynamic linker and the Swift
/// runtime give to its addresses: the one type that calls the `CNodesMemory` C target.
///
/// Every read goes through `process_vm_readv` on the process's own pid, so an address that is
/// not mapped (a wrong guess about what a word is) fails with `EFAULT` instead of crashing.
enum ProcessMemory {
    /// Copies `length` bytes at `address` into `destination`. Returns how many bytes were
    /// copied (fewer when the range runs into unmapped memory), or the error number.
    static func copy(from address: UInt, length: Int, into destination: UnsafeMutableRawPointer) -> Result<Int, ReadError> {
        let copied = cnm_read_own_memory(destination, address, length)
        return copied < 0 ? .failure(ReadError(code: Int32(-copied))) : .success(copied)
    }

    /// Frees `blocks` (at most 8, from `malloc`, each of 16 bytes or more) on a thread made for
    /// it, and gives the second word of each as that thread left it (0 where it could not be
    /// read); nil when no thread could be made, and the blocks are then still the caller's.
    static func freeOnANewThread(_ blocks: [UnsafeMutableRawPointer]) -> [UInt]? {
        let pointers: [UnsafeMutableRawPointer?] = blocks
        var words = [UInt](repeating: 0, count: blocks.count)
        let result = pointers.withUnsafeBufferPointer { pointers in
            words.withUnsafeMutableBufferPointer { cnm_free_on_new_thread(pointers.baseAddress, pointers.count, $0.baseAddress) }
        }
        return result == 0 ? words : nil
    }

    /// The word at `address`, or nil when it cannot be read.
    static func word(at address: UInt) -> UInt? {
        var value: UInt = 0
        let copied = withUnsafeMutableBytes(of: &value) { cnm_read_own_memory($0.baseAddress, address, 8) }
        return copied == 8 ? value : nil
    }

    /// `count` bytes at `address`, or nil when they cannot all be read.
    static func bytes(at address: UInt, count: Int) -> [UInt8]? {
        guard count > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: count)
        let copied = bytes.withUnsafeMutableBytes { cnm_read_own_memory($0.baseAddress, address, count) }
        return copied == count ? bytes : nil
    }

    /// The symbol of a shared object that contains `address`, as the dynamic linker knows it
    /// (executables' own globals are local symbols, which it does not know: see ``ElfSymbols``).
    static func dynamicSymbol(containing address: UInt) -> (name: String, offset: UInt, image: String)? {
        var name: UnsafePointer<CChar>?
        var start: UInt = 0
        var size = 0
        var image: UnsafePointer<CChar>?
        var base: UInt = 0
        guard cnm_symbol_at(address, &name, &start, &size, &image, &base) != 0 else { return nil }
        let imageName = image.map { String(cString: $0) } ?? ""
        guard let name, start <= address, address < start &+ UInt(max(size, 8)) else { return nil }
        return (String(cString: name), address - start, imageName)
    }

    /// The value of the pointer that the data symbol `name` of a loaded image holds (such as the
    /// concurrency runtime's `_swift_concurrency_debug_asyncTaskMetadata`), or nil.
    static func pointer(named name: String) -> UInt? {
        let address = cnm_data_symbol(name)
        guard address != 0, let value = word(at: address), value != 0 else { return nil }
        return value
    }

    /// The Swift runtime's demangling of `symbol`, or nil when it is not a Swift symbol.
    static func demangle(_ symbol: String) -> String? {
        var symbol = symbol
        return symbol.withUTF8 { bytes -> String? in
            guard let base = bytes.baseAddress else { return nil }
            let text = base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                swift_demangle($0, bytes.count, nil, nil, 0)
            }
            guard let text else { return nil }
            defer { free(text) }
            return String(cString: text)
        }
    }

    /// Asks the processor to bring the memory at `pointer` into its cache: a search that will
    /// read it soon does not wait for it then.
    @inline(__always)
    static func prefetch(_ pointer: UnsafeRawPointer) {
        cnm_prefetch(pointer)
    }

    /// Whether the processor counts the bits of a word in one instruction (``bitCount(_:inOne:)``):
    /// the package builds for the baseline x86-64, which has no such instruction.
    static func countsBitsInOne() -> Bool { cnm_has_popcount() != 0 }

    /// The number of bits set in `word`: in one instruction when `inOne` (what
    /// ``countsBitsInOne()`` said), else as the language counts them.
    @inline(__always)
    static func bitCount(_ word: UInt64, inOne: Bool) -> Int {
        inOne ? Int(cnm_popcount(word)) : word.nonzeroBitCount
    }

    /// Forks a child holding a frozen copy of this process's memory (``FrozenChild``), which keeps
    /// the descriptor `keep` open and no other past 2. The parent gets the child's pid and a pidfd
    /// (-1 without one); the child gets pid 0.
    static func forkFrozen(keeping keep: Int32) -> Result<(pid: Int, pidfd: Int32), ReadError> {
        var pidfd: Int32 = -1
        let pid = cnm_fork_frozen(keep, &pidfd)
        return pid < 0 ? .failure(ReadError(code: Int32(-pid))) : .success((pid, pidfd))
    }

    /// Reaps a forked child: true when it is gone.
    static func reap(_ pid: Int, pidfd: Int32, wait: Bool) -> Bool {
        cnm_reap(pid, pidfd, wait ? 1 : 0) != 0
    }

    /// Kills a forked child.
    static func kill(_ pid: Int, pidfd: Int32) {
        cnm_kill_child(pid, pidfd)
    }

    /// Whether a forked child's thread (the one that forked) is blocked on a lock: in `futex`, as
    /// `/proc/<pid>/syscall` shows it (false when it cannot be read).
    static func waitsOnLock(_ pid: Int) -> Bool {
        cnm_child_waits_on_lock(pid) == 1
    }

    /// What a forked child that gave no answer was doing, in words for a note: `running`,
    /// `waiting on a lock`, `blocked in system call N`, `stopped`, … (empty when it cannot be told).
    static func childActivity(_ pid: Int) -> String {
        var call = -1
        var lockWait: Int32 = 0
        let state = cnm_child_state(pid, &call, &lockWait)
        if lockWait != 0 { return "waiting on a lock" }
        switch UInt8(clamping: state) {
        case UInt8(ascii: "R"): return "running"
        case UInt8(ascii: "S"), UInt8(ascii: "D"):
            return call >= 0 ? "blocked in system call \(call)" : (state == Int32(UInt8(ascii: "D")) ? "waiting for the disk" : "asleep")
        case UInt8(ascii: "T"), UInt8(ascii: "t"): return "stopped"
        case UInt8(ascii: "Z"): return "ended"
        default: return ""
        }
    }

    /// A pipe, both ends closing on exec: (reader, writer).
    static func pipe() -> Result<(reader: Int32, writer: Int32), ReadError> {
        var descriptors: (Int32, Int32) = (-1, -1)
        let result = withUnsafeMutableBytes(of: &descriptors) { cnm_pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
        return result < 0 ? .failure(ReadError(code: -result)) : .success((descriptors.0, descriptors.1))
    }

    /// Whether every page of the range is mapped.
    static func isMapped(_ address: UInt, length: Int) -> Bool {
        cnm_region_mapped(address, length) != 0
    }

    /// Waits until `descriptor` can be read (or is closed): true; false after `milliseconds`.
    static func waitReadable(_ descriptor: Int32, milliseconds: Int32) -> Bool {
        cnm_wait_readable(descriptor, milliseconds) > 0
    }

    /// Ends the process at once, running nothing (`_exit`).
    static func exitNow(_ code: Int32) -> Never {
        cnm_exit_now(code)
    }

    /// The calling thread's kernel id.
    static var currentThreadID: Int { Int(cnm_thread_id()) }

    /// A thread's stack, copied at the instant of a capture.
    struct CapturedStack {
        var stackPointer: UInt
        var start: UInt
        var end: UInt
        var copy: UnsafeRawPointer
    }

    /// Copies the used stacks of `threads` at one instant (``cnm_capture_stacks``), each within
    /// the range of `stackRanges` that holds its stack pointer: one entry per thread, nil where
    /// it was not copied; nil when no capture could be made. ``captureDone()`` ends the use of
    /// the copies.
    static func captureStacks(
        of threads: [Int], stackRanges: [(start: UInt, end: UInt)], milliseconds: Int
    ) -> [CapturedStack?]? {
        let ids = threads.map { Int($0) }
        let starts = stackRanges.map { UInt($0.start) }
        let ends = stackRanges.map { UInt($0.end) }
        var captured = [cnm_captured_stack](repeating: cnm_captured_stack(), count: threads.count)
        let result = cnm_capture_stacks(
            ids, ids.count, starts, ends, starts.count, Int32(clamping: milliseconds), &captured)
        guard result >= 0 else { return nil }
        return captured.map { entry in
            guard entry.copied != 0, let copy = entry.copy else { return nil }
            return CapturedStack(stackPointer: UInt(entry.stackPointer), start: UInt(entry.start), end: UInt(entry.end), copy: copy)
        }
    }

    /// Ends the use of the last capture's copies.
    static func captureDone() { cnm_capture_done() }

    /// The capture's buffer, once it exists: memory of the analysis, never of the program.
    static var captureBuffer: (start: UInt, end: UInt)? {
        var start: UInt = 0
        var end: UInt = 0
        return cnm_capture_buffer(&start, &end) != 0 ? (start, end) : nil
    }

    /// Whether a thread blocked in system call `call` would see an interruption (`EINTR` from a
    /// sleep or a poll): such a thread is not interrupted by a capture.
    static func interruptShows(inCall call: Int) -> Bool { cnm_interrupt_shows(call) != 0 }

    /// A failed read: the system's error number.
    struct ReadError: Error {
        /// The error number (`EFAULT`, `EPERM`, `ENOSYS` …).
        var code: Int32
    }
}
