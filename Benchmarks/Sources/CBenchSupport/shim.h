// Linux declarations the harness needs that Glibc's Swift module does not carry, and a CPU
// pause for spinning. Header only: nothing to link but libc and libdispatch.
#pragma once
#include <errno.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <stdint.h>

/// The kernel thread id of the calling thread.
static inline int bench_gettid(void) { return (int)syscall(SYS_gettid); }

/// Sets the calling thread's timer slack (PR_SET_TIMERSLACK); 0 restores the default.
static inline int bench_set_timer_slack(unsigned long nanoseconds) {
    return prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0);
}

/// One iteration of a spin-wait: tells the CPU this is a busy-wait loop (x86 `pause`, arm64
/// `yield`), so it neither floods the memory system nor starves a hyperthread sibling.
static inline void bench_cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

// libdispatch's run-loop bridge (exported by the toolchain's libdispatch, as CoreFoundation
// uses it): the main queue's wake-up eventfd and the call that drains the main queue. The
// floor of the dispatch-main wake waits on the first and calls the second. Main thread only.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *_Nullable message);
