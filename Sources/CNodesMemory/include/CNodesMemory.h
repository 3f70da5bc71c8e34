// Safe reads of the process's own memory and the names of its symbols, for the retainer
// analysis of NodesDebug. Only NodesDebug's ProcessMemory calls these (STYLE.md, rule 10);
// the tracking threads call the clock and the thread calls below.
#ifndef CNODESMEMORY_H
#define CNODESMEMORY_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/// Nanoseconds of `clock` (clock_gettime). Inline C rather than Swift: the `timespec` it fills
/// is a local whose address is taken, and a Swift function with one gets a stack protector,
/// a check that the tracker's recording functions would otherwise pay on every change.
static inline uint64_t cnm_clock_nanoseconds(clockid_t clock) {
    struct timespec spec;
    clock_gettime(clock, &spec);
    return (uint64_t)spec.tv_sec * 1000000000u + (uint64_t)spec.tv_nsec;
}

/// Copies `length` bytes at `address` of this process into `destination` with
/// process_vm_readv on the process's own pid: an unmapped address fails (EFAULT) instead of
/// faulting. Returns the number of bytes copied (fewer when the range ends in unmapped memory),
/// or -errno.
long cnm_read_own_memory(void *destination, uintptr_t address, size_t length);

/// What the dynamic linker knows of `address`: the symbol that contains it (name, start, size)
/// and the image (path, load address). Returns 0 when nothing is known. Strings belong to the
/// dynamic linker.
int cnm_symbol_at(uintptr_t address, const char **symbolName, uintptr_t *symbolStart, size_t *symbolSize,
                  const char **imagePath, uintptr_t *imageBase);

/// The address of the data symbol `name` exported by a loaded image, or 0.
uintptr_t cnm_data_symbol(const char *name);

/// Frees `count` blocks (at most 8, each at least 16 bytes) on a new thread of its own, then
/// reads back the second word of each into `words`. A new thread's cache of freed blocks starts
/// empty, whatever the other threads' caches hold, so glibc keeps each block there and writes its
/// key into that word. Returns 0, or -errno when no thread could be made (the blocks are then
/// still the caller's).
int cnm_free_on_new_thread(void *const *blocks, size_t count, uintptr_t *words);

/// The calling thread's kernel id.
long cnm_thread_id(void);

/// Names the calling thread as `top -H`, `ps -L` and profilers show it (at most 15 bytes).
void cnm_name_thread(const char *name);

/// Forks a child that holds a frozen copy of the process's memory (copy on write: no byte is
/// copied until one side writes it), for an analysis that reads it in place. In the child, before
/// it returns 0: every signal blocked and every disposition back to the default (no handler of the
/// host runs there), no core file, death with the parent (PR_SET_PDEATHSIG), and every descriptor
/// but `keep` and 0-2 closed. In the parent: the child's pid, with a pidfd for it in `*pidfd` (-1
/// when the kernel has none), or -errno when the fork failed. The calling thread's signal mask is
/// as it was.
long cnm_fork_frozen(int keep, int *pidfd);

/// Reaps the child `child` (through `pidfd` when it is not -1, so that a pid reused meanwhile is
/// never touched): 1 when it is gone (reaped now, or by someone else), 0 when it still runs
/// (`wait` 0), or -errno.
int cnm_reap(long child, int pidfd, int wait);

/// Kills the child `child` (through `pidfd` when it is not -1).
void cnm_kill_child(long child, int pidfd);

/// Whether forked child `child` (its thread that forked) is blocked in `futex`: waiting on a lock
/// that a thread of the parent held at the fork, which nothing in the child can ever release.
/// 1 when `/proc/<child>/syscall` shows it; 0 otherwise (running, in another call, or the file
/// cannot be read).
int cnm_child_waits_on_lock(long child);

/// What forked child `child` is doing, for a note when it gave no answer: its state as
/// `/proc/<child>/stat` shows it (`R`, `S`, `D`, `T`, …; 0 when unreadable); in `*call` the system
/// call it is blocked in (-1 when it runs or that cannot be read), and in `*lockWait` whether that
/// call is a wait on a lock (`futex`).
int cnm_child_state(long child, long *call, int *lockWait);

/// Whether every page of `length` bytes at `address` is mapped.
int cnm_region_mapped(uintptr_t address, size_t length);

/// Waits until `descriptor` has something to read or is closed: 1, 0 after `milliseconds`
/// (or a signal), or -errno.
long cnm_wait_readable(int descriptor, int milliseconds);

/// A pipe whose two ends close on exec: 0, or -errno.
int cnm_pipe(int descriptors[2]);

/// Ends the process at once (`_exit`): no exit handler, no buffer flushed.
__attribute__((noreturn)) void cnm_exit_now(int code);

/// Overwrites `length` bytes of the calling thread's stack below the caller's frame with zeros,
/// so that references left there by calls that have returned are gone.
void cnm_scrub_stack(size_t length);

/// One thread's stack as cnm_capture_stacks copied it.
typedef struct {
    /// Whether the stack was copied (the rest is zero when not).
    int copied;
    /// The stack pointer where the thread was interrupted.
    uintptr_t stackPointer;
    /// The range copied: from the stack pointer (less the red zone) to the top of its mapping.
    uintptr_t start;
    uintptr_t end;
    /// Where the copy is (in a buffer that lives until cnm_capture_done).
    const void *copy;
} cnm_captured_stack;

/// Copies the used part of the stacks of `threads` (kernel ids; not the calling thread) at one
/// instant: a signal that nothing else handles (SIGPROF, which the threads of libdispatch leave
/// unblocked, else a real-time one) interrupts each; its handler reads the
/// stack pointer where the thread was, copies from there to the top of the range of
/// `starts`/`ends` (sorted, disjoint) that holds it, and parks the thread until every one is
/// copied or `milliseconds` have passed. `captured` gets one entry per thread. Returns how many
/// were copied, or -errno (`EBUSY` while another capture's copies are in use: call
/// cnm_capture_done when done with them). Interrupted system calls restart (`SA_RESTART`), but
/// those that never restart (sleeps, polls) fail with `EINTR`, and a blocked write that had sent
/// some bytes returns their count: leave their threads out (cnm_interrupt_shows). Each thread's
/// call is looked at again right before its signal, and one that has gone into such a call since
/// the caller looked is left out (not copied).
long cnm_capture_stacks(const long *threads, size_t count, const uintptr_t *starts, const uintptr_t *ends,
                        size_t rangeCount, int milliseconds, cnm_captured_stack *captured);

/// Ends the use of the last capture's copies.
void cnm_capture_done(void);

/// The range of the capture's buffer, once it is mapped (1), so that no analysis reads it as
/// memory of the program's; 0 before.
int cnm_capture_buffer(uintptr_t *start, uintptr_t *end);

/// Whether the system call `call`, interrupted by a signal handler, shows it whatever
/// `SA_RESTART` says: fails with `EINTR` (sleeps, polls, waits for signals, connect), or returns
/// a short count (a write or send that blocked after some bytes went). A thread blocked in one is
/// not interrupted by a capture.
int cnm_interrupt_shows(long call);

/// Asks the processor to bring the cache line at `address` in (no effect on correctness).
static inline void cnm_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }

/// Tells the processor that this thread spins waiting for another (x86-64's `pause`): the
/// other hardware thread of the core runs meanwhile, and the loop leaves it sooner.
static inline void cnm_spin_pause(void) {
#if defined(__x86_64__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

/// A word that one thread writes and another reads: loaded with acquire ordering (what the
/// writer wrote before its release store is seen), stored with release ordering.
static inline long cnm_load_acquire(const long *word) { return __atomic_load_n(word, __ATOMIC_ACQUIRE); }
static inline void cnm_store_release(long *word, long value) { __atomic_store_n(word, value, __ATOMIC_RELEASE); }
/// A byte that one thread writes and another reads with no order between them (a hint).
static inline uint8_t cnm_load_relaxed_byte(const uint8_t *byte) { return __atomic_load_n(byte, __ATOMIC_RELAXED); }
static inline void cnm_store_relaxed_byte(uint8_t *byte, uint8_t value) { __atomic_store_n(byte, value, __ATOMIC_RELAXED); }

/// Whether the processor counts bits in one instruction (x86-64's `popcnt`; always elsewhere).
/// The package builds for the baseline x86-64, where a count of bits is a dozen instructions.
int cnm_has_popcount(void);

/// The number of bits set in `word`, in one instruction: only where `cnm_has_popcount()` said so.
/// (Written as the instruction itself, which needs no processor feature at build time.)
static inline uint32_t cnm_popcount(uint64_t word) {
#if defined(__x86_64__)
    uint64_t count;
    __asm__("popcntq %1, %0" : "=r"(count) : "r"(word) : "cc");
    return (uint32_t)count;
#else
    return (uint32_t)__builtin_popcountll(word);
#endif
}

/// The words of `words[0..<count]` that may be references to a heap block: 16-byte aligned, and
/// in `[low0, low0 + span0)` or `[low1, low1 + span1)`. Of each, its low 32 bits are appended to
/// `values` and its position (counted from `firstPosition`) to `positions`. Both must have room
/// for `count + 4` entries (entries are written at the end, then kept or not). Returns how many
/// were appended. Reads the words in order, with vector instructions where the processor has
/// them (AVX2).
size_t cnm_collect_candidates(const uint64_t *words, size_t count, uint32_t firstPosition, uint64_t low0, uint64_t span0,
                              uint64_t low1, uint64_t span1, uint32_t *values, uint32_t *positions);

/// The indices of the entries of `values[0..<count]` equal to one of `wanted[0..<wantedCount]`
/// (in ascending order),
/// in order, into `found` (room for `capacity`). Returns how many there are, which may be more
/// than `capacity` (then only the first `capacity` are written).
size_t cnm_find_candidates(const uint32_t *values, size_t count, const uint32_t *wanted, size_t wantedCount,
                           uint32_t *found, size_t capacity);

/// The Swift runtime's demangler (exported by libswiftCore): returns a malloc'd string, or NULL
/// when `mangledName` is not a Swift symbol.
char *swift_demangle(const char *mangledName, size_t mangledNameLength, char *outputBuffer, size_t *outputBufferSize,
                     uint32_t flags);

#endif
