#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CNodesMemory.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>
#include <ucontext.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

long cnm_read_own_memory(void *destination, uintptr_t address, size_t length) {
    struct iovec local = {destination, length};
    struct iovec remote = {(void *)address, length};
    ssize_t copied = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return copied < 0 ? -(long)errno : (long)copied;
}

int cnm_symbol_at(uintptr_t address, const char **symbolName, uintptr_t *symbolStart, size_t *symbolSize,
                  const char **imagePath, uintptr_t *imageBase) {
    Dl_info info;
    const ElfW(Sym) *symbol = NULL;
    memset(&info, 0, sizeof info);
    if (dladdr1((const void *)address, &info, (void **)&symbol, RTLD_DL_SYMENT) == 0) return 0;
    *imagePath = info.dli_fname;
    *imageBase = (uintptr_t)info.dli_fbase;
    *symbolName = info.dli_sname;
    *symbolStart = (uintptr_t)info.dli_saddr;
    *symbolSize = symbol ? (size_t)symbol->st_size : 0;
    return 1;
}

uintptr_t cnm_data_symbol(const char *name) { return (uintptr_t)dlsym(RTLD_DEFAULT, name); }

long cnm_thread_id(void) { return (long)syscall(SYS_gettid); }

struct cnm_freeing {
    void *const *blocks;
    size_t count;
    uintptr_t *words;
};

static void *cnm_free_blocks(void *argument) {
    struct cnm_freeing *freeing = argument;
    // A first block of a size none of the probe's is, so that the thread's cache is made before
    // the blocks are freed.
    free(malloc(200));
    for (size_t index = 0; index < freeing->count; index++) {
        free(freeing->blocks[index]);
        // Read through the kernel, not as a load the compiler may reason about after free.
        uintptr_t word = 0;
        if (cnm_read_own_memory(&word, (uintptr_t)freeing->blocks[index] + sizeof(uintptr_t), sizeof word) == sizeof word)
            freeing->words[index] = word;
    }
    return NULL;
}

int cnm_free_on_new_thread(void *const *blocks, size_t count, uintptr_t *words) {
    if (count > 8) return -EINVAL;
    for (size_t index = 0; index < count; index++) words[index] = 0;
    struct cnm_freeing freeing = {blocks, count, words};
    pthread_t thread;
    int failed = pthread_create(&thread, NULL, cnm_free_blocks, &freeing);
    if (failed != 0) return -failed;
    (void)pthread_join(thread, NULL);
    return 0;
}

void cnm_name_thread(const char *name) { (void)pthread_setname_np(pthread_self(), name); }

/// The child's side of cnm_fork_frozen, before any other code of the child runs: no handler of
/// the host's runs in it (every disposition back to the default, every signal blocked), it
/// leaves no core file, it dies with its parent, and it holds no descriptor but `keep` (a
/// pipe's reader elsewhere must see its end when its writers are done, not when this child is).
static void cnm_become_frozen_child(int keep, pid_t parent) {
    struct sigaction standard;
    memset(&standard, 0, sizeof standard);
    standard.sa_handler = SIG_DFL;
    sigemptyset(&standard.sa_mask);
    for (int signal = 1; signal < NSIG; signal++) {
        if (signal == SIGKILL || signal == SIGSTOP) continue;
        (void)sigaction(signal, &standard, NULL);
    }
    struct rlimit none = {0, 0};
    (void)setrlimit(RLIMIT_CORE, &none);
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (getppid() != parent) _exit(70);
    int highest = (int)sysconf(_SC_OPEN_MAX);
    if (highest < 0 || highest > 65536) highest = 65536;
#ifdef SYS_close_range
    int closedBelow = keep > 3 ? syscall(SYS_close_range, 3u, (unsigned)(keep - 1), 0u) == 0 : 1;
    int closedAbove = syscall(SYS_close_range, (unsigned)(keep + 1), ~0u, 0u) == 0;
#else
    int closedBelow = 0, closedAbove = 0;
#endif
    for (int descriptor = 3; descriptor < highest && !(closedBelow && closedAbove); descriptor++) {
        if (descriptor == keep) continue;
        if (descriptor < keep && closedBelow) continue;
        if (descriptor > keep && closedAbove) break;
        (void)close(descriptor);
    }
}

long cnm_fork_frozen(int keep, int *pidfd) {
    sigset_t all, previous;
    sigfillset(&all);
    *pidfd = -1;
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) {
        cnm_become_frozen_child(keep, parent);
        return 0;
    }
    int error = errno;
    if (child > 0) {
#ifdef SYS_pidfd_open
        long descriptor = syscall(SYS_pidfd_open, child, 0);
        if (descriptor >= 0) {
            (void)fcntl((int)descriptor, F_SETFD, FD_CLOEXEC);
            *pidfd = (int)descriptor;
        }
#endif
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    return child > 0 ? (long)child : -(long)error;
}

int cnm_reap(long child, int pidfd, int wait) {
    if (pidfd >= 0) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int flags = WEXITED | (wait ? 0 : WNOHANG);
        long result;
        do {
            result = syscall(SYS_waitid, P_PIDFD, pidfd, &info, flags, NULL);
        } while (result < 0 && errno == EINTR);
        if (result < 0) return errno == ECHILD ? 1 : -errno;
        return info.si_pid != 0 ? 1 : 0;
    }
    int status = 0;
    pid_t result;
    do {
        result = waitpid((pid_t)child, &status, __WALL | (wait ? 0 : WNOHANG));
    } while (result < 0 && errno == EINTR);
    if (result < 0) return errno == ECHILD ? 1 : -errno;
    return result == 0 ? 0 : 1;
}

void cnm_kill_child(long child, int pidfd) {
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) == 0) return;
#endif
    (void)kill((pid_t)child, SIGKILL);
}

int cnm_region_mapped(uintptr_t address, size_t length) {
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = address & ~(page - 1);
    return madvise((void *)start, length + (address - start), MADV_NORMAL) == 0;
}

long cnm_wait_readable(int descriptor, int milliseconds) {
    struct pollfd entry = {descriptor, POLLIN, 0};
    int result = poll(&entry, 1, milliseconds);
    if (result < 0) return errno == EINTR ? 0 : -errno;
    return result;
}

void cnm_exit_now(int code) { _exit(code); }

int cnm_pipe(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC) == 0 ? 0 : -errno; }

// MARK: Stack capture

// One round of cnm_capture_stacks at a time; its state is static so that a handler that runs
// late never writes into memory that is gone. The buffer is mapped once and kept.
enum { CNM_MAX_THREADS = 4096, CNM_MAX_RANGES = 8192 };
enum { CNM_SLOT_WAITING = 0, CNM_SLOT_COPYING = 1, CNM_SLOT_COPIED = 2, CNM_SLOT_CLOSED = 3, CNM_SLOT_FAILED = 4 };
static const size_t cnm_capture_capacity = (size_t)64 << 20;
#if defined(__x86_64__)
static const uintptr_t cnm_red_zone = 128;
#else
static const uintptr_t cnm_red_zone = 0;
#endif

static struct {
    _Atomic int busy;
    _Atomic int broken;
    int signal;
    unsigned char *buffer;
    _Atomic size_t used;
    _Atomic uint32_t generation;
    _Atomic uint32_t released;
    _Atomic uint32_t done;
    size_t count;
    long threads[CNM_MAX_THREADS];
    _Atomic int states[CNM_MAX_THREADS];
    cnm_captured_stack captured[CNM_MAX_THREADS];
    size_t rangeCount;
    uintptr_t starts[CNM_MAX_RANGES];
    uintptr_t ends[CNM_MAX_RANGES];
} cnm_capture;

static long cnm_futex(_Atomic uint32_t *word, int operation, uint32_t value, const struct timespec *timeout) {
    return syscall(SYS_futex, (uint32_t *)word, operation | FUTEX_PRIVATE_FLAG, value, timeout, NULL, 0);
}

static uint64_t cnm_now_nanos(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

static void cnm_capture_handler(int signal, siginfo_t *info, void *context) {
    (void)signal; (void)info;
    int savedErrno = errno;
    uint32_t generation = atomic_load(&cnm_capture.generation);
    long self = (long)syscall(SYS_gettid);
    size_t slot = cnm_capture.count;
    for (size_t index = 0; index < cnm_capture.count; index++) {
        if (cnm_capture.threads[index] == self) { slot = index; break; }
    }
    int expected = CNM_SLOT_WAITING;
    if (slot == cnm_capture.count || atomic_load(&cnm_capture.released) == generation
        || !atomic_compare_exchange_strong(&cnm_capture.states[slot], &expected, CNM_SLOT_COPYING)) {
        errno = savedErrno;
        return;
    }
    ucontext_t *interrupted = (ucontext_t *)context;
#if defined(__x86_64__)
    uintptr_t pointer = (uintptr_t)interrupted->uc_mcontext.gregs[REG_RSP];
#elif defined(__aarch64__)
    uintptr_t pointer = (uintptr_t)interrupted->uc_mcontext.sp;
#else
    uintptr_t pointer = 0;
#endif
    int outcome = CNM_SLOT_FAILED;
    // The mapping that holds the stack pointer (a binary search of the sorted ranges).
    size_t low = 0, high = cnm_capture.rangeCount;
    while (pointer != 0 && low < high) {
        size_t middle = (low + high) / 2;
        if (cnm_capture.ends[middle] <= pointer) low = middle + 1;
        else if (cnm_capture.starts[middle] > pointer) high = middle;
        else {
            uintptr_t start = pointer - cnm_red_zone;
            if (start < cnm_capture.starts[middle] || start > pointer) start = cnm_capture.starts[middle];
            start &= ~(uintptr_t)7;
            uintptr_t end = cnm_capture.ends[middle] & ~(uintptr_t)7;
            size_t length = end - start;
            size_t offset = atomic_fetch_add(&cnm_capture.used, (length + 15) & ~(size_t)15);
            // Not memcpy: the range was read from /proc/self/maps before the signal, and its part
            // past this thread's stack (another mapping the kernel showed as one with it) may be
            // gone by now. process_vm_readv copies up to the first byte that is not there, and a
            // stack pointer's own page is: the copy is this thread's stack, never a fault.
            long copied = offset + length <= cnm_capture_capacity
                ? cnm_read_own_memory(cnm_capture.buffer + offset, start, length) : -1;
            if (copied > 0 && start + (uintptr_t)copied > pointer) {
                cnm_capture.captured[slot].stackPointer = pointer;
                cnm_capture.captured[slot].start = start;
                cnm_capture.captured[slot].end = (start + (uintptr_t)copied) & ~(uintptr_t)7;
                cnm_capture.captured[slot].copy = cnm_capture.buffer + offset;
                outcome = CNM_SLOT_COPIED;
            }
            break;
        }
    }
    atomic_store(&cnm_capture.states[slot], outcome);
    atomic_fetch_add(&cnm_capture.done, 1);
    (void)cnm_futex(&cnm_capture.done, FUTEX_WAKE, 1, NULL);
    // Parked until every thread is copied, so that the copies are of one instant; never for
    // more than a second, whatever the capturing thread does.
    uint64_t limit = cnm_now_nanos() + 1000000000u;
    while (atomic_load(&cnm_capture.released) != generation) {
        uint64_t now = cnm_now_nanos();
        if (now >= limit) break;
        struct timespec wait = {(time_t)((limit - now) / 1000000000u), (long)((limit - now) % 1000000000u)};
        uint32_t seen = atomic_load(&cnm_capture.released);
        if (seen == generation) break;
        (void)cnm_futex(&cnm_capture.released, FUTEX_WAIT, seen, &wait);
    }
    errno = savedErrno;
}

/// Installs the handler on SIGPROF, or a real-time signal, that nothing else handles: its number,
/// or 0.
static int cnm_capture_signal(void) {
    if (cnm_capture.signal != 0) {
        struct sigaction current;
        if (sigaction(cnm_capture.signal, NULL, &current) == 0 && (current.sa_flags & SA_SIGINFO)
            && current.sa_sigaction == cnm_capture_handler)
            return cnm_capture.signal;
        return 0;  // taken over by the host since: no capture
    }
    // SIGPROF first: libdispatch's worker threads (Swift's cooperative pool among them), and every
    // thread they start, block every signal but the synchronous ones and SIGPROF. It is a
    // profiler's, and taken only while no profiler has it.
    for (int candidate = SIGRTMAX + 1; candidate >= SIGRTMIN + 2; candidate--) {
        int signal = candidate == SIGRTMAX + 1 ? SIGPROF : candidate;
        struct sigaction current;
        if (sigaction(signal, NULL, &current) != 0) continue;
        if ((current.sa_flags & SA_SIGINFO) || current.sa_handler != SIG_DFL) continue;
        struct sigaction handler;
        memset(&handler, 0, sizeof handler);
        handler.sa_sigaction = cnm_capture_handler;
        handler.sa_flags = SA_SIGINFO | SA_RESTART;
        sigfillset(&handler.sa_mask);
        if (sigaction(signal, &handler, NULL) != 0) continue;
        cnm_capture.signal = signal;
        return signal;
    }
    return 0;
}

/// The system call that the task of `path` (a `/proc/.../syscall` file) is blocked in: its
/// number, or -1 while the task runs (or where the file cannot be read).
static long cnm_call_in(const char *path) {
    int descriptor;
    do descriptor = open(path, O_RDONLY | O_CLOEXEC);
    while (descriptor < 0 && errno == EINTR);
    if (descriptor < 0) return -1;
    char line[32];
    ssize_t length;
    do length = read(descriptor, line, sizeof line - 1);
    while (length < 0 && errno == EINTR);
    close(descriptor);
    if (length <= 0 || line[0] < '0' || line[0] > '9') return -1;
    long call = 0;
    for (ssize_t index = 0; index < length && line[index] >= '0' && line[index] <= '9' && call < 1 << 20; index++)
        call = call * 10 + (line[index] - '0');
    return call;
}

/// The system call that thread `thread` of this process is blocked in, as
/// `/proc/self/task/<id>/syscall` shows it: its number, or -1 while the thread runs (or where the
/// file cannot be read).
static long cnm_thread_call(long thread) {
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%ld/syscall", thread);
    return cnm_call_in(path);
}

static int cnm_is_lock_wait(long call) {
    if (call == SYS_futex) return 1;
#ifdef SYS_futex_waitv
    if (call == SYS_futex_waitv) return 1;
#endif
    return 0;
}

int cnm_child_waits_on_lock(long child) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/syscall", child);
    return cnm_is_lock_wait(cnm_call_in(path));
}

int cnm_child_state(long child, long *call, int *lockWait) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/syscall", child);
    *call = cnm_call_in(path);
    *lockWait = cnm_is_lock_wait(*call);
    snprintf(path, sizeof path, "/proc/%ld/stat", child);
    int descriptor;
    do descriptor = open(path, O_RDONLY | O_CLOEXEC);
    while (descriptor < 0 && errno == EINTR);
    if (descriptor < 0) return 0;
    char line[512];
    ssize_t length;
    do length = read(descriptor, line, sizeof line - 1);
    while (length < 0 && errno == EINTR);
    close(descriptor);
    if (length <= 0) return 0;
    line[length] = 0;
    // `pid (comm) S ...`: the state follows the last `)`, which a name may contain too.
    char *end = strrchr(line, ')');
    if (end == NULL || end[1] != ' ' || end[2] == 0) return 0;
    return (unsigned char)end[2];
}

long cnm_capture_stacks(const long *threads, size_t count, const uintptr_t *starts, const uintptr_t *ends,
                        size_t rangeCount, int milliseconds, cnm_captured_stack *captured) {
    if (count > CNM_MAX_THREADS || rangeCount > CNM_MAX_RANGES) return -E2BIG;
    if (atomic_load(&cnm_capture.broken)) return -EBUSY;
    int idle = 0;
    if (!atomic_compare_exchange_strong(&cnm_capture.busy, &idle, 1)) return -EBUSY;
    if (cnm_capture.buffer == NULL) {
        void *mapped = mmap(NULL, cnm_capture_capacity, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                            -1, 0);
        if (mapped == MAP_FAILED) {
            atomic_store(&cnm_capture.busy, 0);
            return -ENOMEM;
        }
        cnm_capture.buffer = mapped;
    }
    int signal = cnm_capture_signal();
    if (signal == 0) {
        atomic_store(&cnm_capture.busy, 0);
        return -ENOTSUP;
    }
    // A new round: slots, then the ranges, then the generation that opens it.
    cnm_capture.count = 0;
    for (size_t index = 0; index < count; index++) {
        atomic_store(&cnm_capture.states[index], CNM_SLOT_WAITING);
        memset(&cnm_capture.captured[index], 0, sizeof cnm_capture.captured[index]);
        cnm_capture.threads[index] = threads[index];
    }
    memcpy(cnm_capture.starts, starts, rangeCount * sizeof *starts);
    memcpy(cnm_capture.ends, ends, rangeCount * sizeof *ends);
    cnm_capture.rangeCount = rangeCount;
    atomic_store(&cnm_capture.used, 0);
    atomic_store(&cnm_capture.done, 0);
    uint32_t generation = atomic_load(&cnm_capture.generation) + 1;
    if (generation == atomic_load(&cnm_capture.released)) generation++;
    cnm_capture.count = count;
    atomic_store(&cnm_capture.generation, generation);

    pid_t process = getpid();
    uint32_t expected = 0;
    for (size_t index = 0; index < count; index++) {
        // Looked at again right before its signal: a thread that has gone into a sleep or a poll
        // since the caller read the list would see the interruption. It is left out (not copied),
        // which narrows the race to the instant between this look and the signal.
        long call = cnm_thread_call(threads[index]);
        if ((call >= 0 && cnm_interrupt_shows(call))
            || syscall(SYS_tgkill, process, (pid_t)threads[index], signal) != 0) {
            int waiting = CNM_SLOT_WAITING;
            (void)atomic_compare_exchange_strong(&cnm_capture.states[index], &waiting, CNM_SLOT_FAILED);
        } else {
            expected++;
        }
    }
    uint64_t deadline = cnm_now_nanos() + (uint64_t)(milliseconds > 0 ? milliseconds : 0) * 1000000u;
    for (;;) {
        uint32_t done = atomic_load(&cnm_capture.done);
        if (done >= expected) break;
        uint64_t now = cnm_now_nanos();
        if (now >= deadline) break;
        struct timespec wait = {(time_t)((deadline - now) / 1000000000u), (long)((deadline - now) % 1000000000u)};
        (void)cnm_futex(&cnm_capture.done, FUTEX_WAIT, done, &wait);
    }
    // Closed: a thread not yet in the handler copies nothing; one that is copying is waited for.
    for (size_t index = 0; index < count; index++) {
        int waiting = CNM_SLOT_WAITING;
        (void)atomic_compare_exchange_strong(&cnm_capture.states[index], &waiting, CNM_SLOT_CLOSED);
    }
    uint64_t patience = cnm_now_nanos() + 200000000u;
    long copied = 0;
    for (size_t index = 0; index < count; index++) {
        int state;
        while ((state = atomic_load(&cnm_capture.states[index])) == CNM_SLOT_COPYING) {
            if (cnm_now_nanos() >= patience) break;
            sched_yield();
        }
        if (state == CNM_SLOT_COPYING) {
            // A handler still copies into the buffer: keep it from being reused, ever.
            atomic_store(&cnm_capture.broken, 1);
        }
        captured[index] = cnm_capture.captured[index];
        captured[index].copied = state == CNM_SLOT_COPIED;
        if (state == CNM_SLOT_COPIED) copied++;
    }
    atomic_store(&cnm_capture.released, generation);
    (void)cnm_futex(&cnm_capture.released, FUTEX_WAKE, INT32_MAX, NULL);
    if (atomic_load(&cnm_capture.broken)) return -EBUSY;
    return copied;
}

void cnm_capture_done(void) {
    // The pages the copies took go back to the system (the buffer is kept for the next capture).
    size_t used = atomic_load(&cnm_capture.used);
    if (used > cnm_capture_capacity) used = cnm_capture_capacity;
    if (cnm_capture.buffer != NULL && used > 0 && !atomic_load(&cnm_capture.broken))
        (void)madvise(cnm_capture.buffer, used, MADV_DONTNEED);
    atomic_store(&cnm_capture.busy, 0);
}

int cnm_capture_buffer(uintptr_t *start, uintptr_t *end) {
    if (cnm_capture.buffer == NULL) return 0;
    *start = (uintptr_t)cnm_capture.buffer;
    *end = *start + cnm_capture_capacity;
    return 1;
}

int cnm_interrupt_shows(long call) {
    switch (call) {
#ifdef SYS_nanosleep
    case SYS_nanosleep:
#endif
    case SYS_clock_nanosleep:
#ifdef SYS_epoll_wait
    case SYS_epoll_wait:
#endif
    case SYS_epoll_pwait:
#ifdef SYS_epoll_pwait2
    case SYS_epoll_pwait2:
#endif
#ifdef SYS_poll
    case SYS_poll:
#endif
    case SYS_ppoll:
#ifdef SYS_select
    case SYS_select:
#endif
    case SYS_pselect6:
#ifdef SYS_pause
    case SYS_pause:
#endif
    case SYS_rt_sigsuspend:
    case SYS_rt_sigtimedwait:
    case SYS_connect:
    case SYS_io_getevents:
    // A write that blocks (a full pipe or socket) and is interrupted after some bytes went
    // returns their count, SA_RESTART or not: a program that sends in one call, as many do,
    // would lose the rest.
    case SYS_write:
    case SYS_writev:
    case SYS_pwrite64:
    case SYS_pwritev:
    case SYS_sendto:
    case SYS_sendmsg:
#ifdef SYS_sendmmsg
    case SYS_sendmmsg:
#endif
        return 1;
    default:
        return 0;
    }
}

#else

long cnm_read_own_memory(void *destination, uintptr_t address, size_t length) {
    (void)destination; (void)address; (void)length;
    return -ENOSYS;
}

int cnm_symbol_at(uintptr_t address, const char **symbolName, uintptr_t *symbolStart, size_t *symbolSize,
                  const char **imagePath, uintptr_t *imageBase) {
    (void)address; (void)symbolName; (void)symbolStart; (void)symbolSize; (void)imagePath; (void)imageBase;
    return 0;
}

uintptr_t cnm_data_symbol(const char *name) {
    (void)name;
    return 0;
}

long cnm_thread_id(void) { return 0; }

int cnm_free_on_new_thread(void *const *blocks, size_t count, uintptr_t *words) {
    (void)blocks; (void)count; (void)words;
    return -ENOSYS;
}

void cnm_name_thread(const char *name) { (void)name; }

long cnm_fork_frozen(int keep, int *pidfd) {
    (void)keep;
    *pidfd = -1;
    return -ENOSYS;
}

int cnm_reap(long child, int pidfd, int wait) {
    (void)child; (void)pidfd; (void)wait;
    return 1;
}

void cnm_kill_child(long child, int pidfd) { (void)child; (void)pidfd; }

int cnm_child_waits_on_lock(long child) {
    (void)child;
    return 0;
}

int cnm_child_state(long child, long *call, int *lockWait) {
    (void)child;
    *call = -1;
    *lockWait = 0;
    return 0;
}

int cnm_region_mapped(uintptr_t address, size_t length) {
    (void)address; (void)length;
    return 0;
}

long cnm_wait_readable(int descriptor, int milliseconds) {
    (void)descriptor; (void)milliseconds;
    return -ENOSYS;
}

void cnm_exit_now(int code) { _exit(code); }

int cnm_pipe(int descriptors[2]) {
    (void)descriptors;
    return -ENOSYS;
}

long cnm_capture_stacks(const long *threads, size_t count, const uintptr_t *starts, const uintptr_t *ends,
                        size_t rangeCount, int milliseconds, cnm_captured_stack *captured) {
    (void)threads; (void)count; (void)starts; (void)ends; (void)rangeCount; (void)milliseconds; (void)captured;
    return -ENOSYS;
}

void cnm_capture_done(void) {}

int cnm_capture_buffer(uintptr_t *start, uintptr_t *end) {
    (void)start; (void)end;
    return 0;
}

int cnm_interrupt_shows(long call) {
    (void)call;
    return 0;
}

#endif

__attribute__((noinline)) void cnm_scrub_stack(size_t length) {
    if (length > 65536) length = 65536;
    char buffer[length];
    memset(buffer, 0, length);
    __asm__ __volatile__("" : : "r"(buffer) : "memory");
}

int cnm_has_popcount(void) {
#if defined(__x86_64__)
    unsigned int eax, ebx, ecx, edx;
    if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
    return (ecx & bit_POPCNT) != 0;
#else
    return 1;
#endif
}

// MARK: Candidate references (the holders' index of a retainer analysis)

static size_t collect_candidates_scalar(const uint64_t *words, size_t count, uint32_t position, uint64_t low0,
                                        uint64_t span0, uint64_t low1, uint64_t span1, uint32_t *values,
                                        uint32_t *positions) {
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t word = words[i];
        // Written whether kept or not: no branch to mispredict on a fifth of the words.
        values[kept] = (uint32_t)word;
        positions[kept] = position + (uint32_t)i;
        kept += ((word & 15) == 0) & ((word - low0 < span0) | (word - low1 < span1));
    }
    return kept;
}

#if defined(__x86_64__)
#include <immintrin.h>

/// Which of four lanes each mask keeps, packed to the front.
static const uint32_t packing[16][8] = {
    {0}, {0}, {1}, {0, 1}, {2}, {0, 2}, {1, 2}, {0, 1, 2},
    {3}, {0, 3}, {1, 3}, {0, 1, 3}, {2, 3}, {0, 2, 3}, {1, 2, 3}, {0, 1, 2, 3},
};

__attribute__((target("avx2,popcnt"))) static size_t collect_candidates_avx2(
    const uint64_t *words, size_t count, uint32_t position, uint64_t low0, uint64_t span0, uint64_t low1, uint64_t span1,
    uint32_t *values, uint32_t *positions) {
    const __m256i sign = _mm256_set1_epi64x((long long)0x8000000000000000ull);
    const __m256i vlow0 = _mm256_set1_epi64x((long long)low0), vlow1 = _mm256_set1_epi64x((long long)low1);
    // Unsigned `d < span` as a signed compare of both with the sign bit flipped.
    const __m256i vspan0 = _mm256_set1_epi64x((long long)(span0 ^ 0x8000000000000000ull));
    const __m256i vspan1 = _mm256_set1_epi64x((long long)(span1 ^ 0x8000000000000000ull));
    const __m256i fifteen = _mm256_set1_epi64x(15), zero = _mm256_setzero_si256();
    const __m256i lows = _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6);
    __m128i at = _mm_add_epi32(_mm_set1_epi32((int)position), _mm_setr_epi32(0, 1, 2, 3));
    const __m128i four = _mm_set1_epi32(4);
    size_t kept = 0, i = 0;
    for (; i + 4 <= count; i += 4) {
        __m256i word = _mm256_loadu_si256((const __m256i *)(words + i));
        __m256i in0 = _mm256_cmpgt_epi64(vspan0, _mm256_xor_si256(_mm256_sub_epi64(word, vlow0), sign));
        __m256i in1 = _mm256_cmpgt_epi64(vspan1, _mm256_xor_si256(_mm256_sub_epi64(word, vlow1), sign));
        __m256i aligned = _mm256_cmpeq_epi64(_mm256_and_si256(word, fifteen), zero);
        int mask = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_and_si256(aligned, _mm256_or_si256(in0, in1))));
        // The kept lanes' low halves and positions, packed to the front, always stored.
        __m256i order = _mm256_loadu_si256((const __m256i *)packing[mask]);
        __m256i low = _mm256_permutevar8x32_epi32(_mm256_permutevar8x32_epi32(word, lows), order);
        __m256i where = _mm256_permutevar8x32_epi32(_mm256_castsi128_si256(at), order);
        _mm_storeu_si128((__m128i *)(values + kept), _mm256_castsi256_si128(low));
        _mm_storeu_si128((__m128i *)(positions + kept), _mm256_castsi256_si128(where));
        kept += (size_t)__builtin_popcount((unsigned)mask);
        at = _mm_add_epi32(at, four);
    }
    return kept + collect_candidates_scalar(words + i, count - i, position + (uint32_t)i, low0, span0, low1, span1,
                                            values + kept, positions + kept);
}
#endif

size_t cnm_collect_candidates(const uint64_t *words, size_t count, uint32_t firstPosition, uint64_t low0, uint64_t span0,
                              uint64_t low1, uint64_t span1, uint32_t *values, uint32_t *positions) {
#if defined(__x86_64__)
    static int hasAVX2 = -1;
    if (hasAVX2 < 0) hasAVX2 = __builtin_cpu_supports("avx2") ? 1 : 0;
    if (hasAVX2) return collect_candidates_avx2(words, count, firstPosition, low0, span0, low1, span1, values, positions);
#endif
    return collect_candidates_scalar(words, count, firstPosition, low0, span0, low1, span1, values, positions);
}

size_t cnm_find_candidates(const uint32_t *values, size_t count, const uint32_t *wanted, size_t wantedCount,
                           uint32_t *found, size_t capacity) {
    size_t hits = 0;
    size_t i = 0;
#if defined(__x86_64__)
    if (wantedCount <= 8) {
        // Four values at a time against each wanted one (SSE2, every x86-64 processor).
        __m128i want[8];
        for (size_t w = 0; w < 8; w++) want[w] = _mm_set1_epi32((int)wanted[w < wantedCount ? w : 0]);
        for (; i + 4 <= count; i += 4) {
            __m128i value = _mm_loadu_si128((const __m128i *)(values + i));
            __m128i any = _mm_cmpeq_epi32(value, want[0]);
            for (size_t w = 1; w < wantedCount; w++) any = _mm_or_si128(any, _mm_cmpeq_epi32(value, want[w]));
            int mask = _mm_movemask_ps(_mm_castsi128_ps(any));
            while (mask) {
                int lane = __builtin_ctz((unsigned)mask);
                if (hits < capacity) found[hits] = (uint32_t)(i + (size_t)lane);
                hits++;
                mask &= mask - 1;
            }
        }
    }
#endif
    // One bit per value's hash, then an exact test of the few that pass.
    uint64_t filter[1024] = {0};
    for (size_t w = 0; w < wantedCount; w++) {
        uint32_t key = (wanted[w] >> 4) * 2654435761u >> 16;
        filter[key >> 6] |= (uint64_t)1 << (key & 63);
    }
    for (; i < count; i++) {
        uint32_t key = (values[i] >> 4) * 2654435761u >> 16;
        if (!((filter[key >> 6] >> (key & 63)) & 1)) continue;
        size_t lower = 0, upper = wantedCount;
        while (lower < upper) {
            size_t middle = (lower + upper) / 2;
            if (wanted[middle] < values[i]) lower = middle + 1; else upper = middle;
        }
        if (lower == wantedCount || wanted[lower] != values[i]) continue;
        if (hits < capacity) found[hits] = (uint32_t)i;
        hits++;
    }
    return hits;
}
