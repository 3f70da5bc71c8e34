#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "CNodesMemory.h"

#include <errno.h>
#include <string.h>

#if defined(__linux__)
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

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

#endif

__attribute__((noinline)) void cnm_scrub_stack(size_t length) {
    if (length > 65536) length = 65536;
    char buffer[length];
    memset(buffer, 0, length);
    __asm__ __volatile__("" : : "r"(buffer) : "memory");
}
