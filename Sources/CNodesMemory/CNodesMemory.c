#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CNodesMemory.h"

#include <errno.h>
#include <string.h>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
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

#endif

__attribute__((noinline)) void cnm_scrub_stack(size_t length) {
    if (length > 65536) length = 65536;
    char buffer[length];
    memset(buffer, 0, length);
    __asm__ __volatile__("" : : "r"(buffer) : "memory");
}
