// Declarations Core needs that Glibc's Swift module does not expose.
#pragma once
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/eventfd.h>

/// The kernel thread id of the calling thread (gettid(2)); the main thread's equals getpid().
static inline int rlk_gettid(void) { return (int)syscall(SYS_gettid); }

// libdispatch's run-loop bridge, exported by the toolchain's libdispatch (as CoreFoundation
// uses it): the main queue's wake-up descriptor (an eventfd on Linux, which libdispatch writes
// and never reads) and the call that drains the main queue. Main thread only.
extern int _dispatch_get_main_queue_handle_4CF(void);
extern void _dispatch_main_queue_callback_4CF(void *_Nullable message);

#include <sys/epoll.h>
#include <errno.h>
/// Whether the file `fd` names supports readiness notification (its driver implements poll):
/// the kernel refuses to watch one that does not (epoll answers EPERM), whatever the backend.
/// Returns 1 if it does, 0 if it does not, -1 with errno set when the probe itself failed.
static inline int rlk_supports_polling(int fd) {
    int probe = epoll_create1(EPOLL_CLOEXEC);
    if (probe < 0) return -1;
    struct epoll_event event = { .events = 0 };
    int result = epoll_ctl(probe, EPOLL_CTL_ADD, fd, &event);
    int error = errno;
    close(probe);
    if (result == 0) return 1;
    if (error == EPERM) return 0;
    errno = error;
    return -1;
}

#include <sys/prctl.h>
/// Names the calling thread (PR_SET_NAME keeps the first 15 bytes).
static inline void rlk_set_thread_name(const char *_Nonnull name) { prctl(PR_SET_NAME, name, 0, 0, 0); }
/// The calling thread's name (PR_GET_NAME) into `buffer`, which must hold 16 bytes.
static inline void rlk_get_thread_name(char *_Nonnull buffer) { (void)prctl(PR_GET_NAME, buffer, 0, 0, 0); }

/// The calling thread's timer slack in nanoseconds (PR_GET_TIMERSLACK).
static inline unsigned long rlk_get_timer_slack(void) { return (unsigned long)prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0); }
/// Sets the calling thread's timer slack; 0 would mean "the default", so use 1 for the least.
static inline void rlk_set_timer_slack(unsigned long nanoseconds) { (void)prctl(PR_SET_TIMERSLACK, nanoseconds, 0, 0, 0); }

#include <string.h>
/// glibc 2.32's strerrorname_np ("EBADF" for EBADF), declared weak so that RunLoopKit still
/// links and runs on an older glibc: the symbolic name is then left out of error descriptions.
extern const char *_Nullable strerrorname_np(int errnum) __attribute__((weak));
/// The symbolic name of an errno value, or NULL when unknown or glibc lacks strerrorname_np.
static inline const char *_Nullable rlk_errno_name(int code) { return strerrorname_np ? strerrorname_np(code) : 0; }
