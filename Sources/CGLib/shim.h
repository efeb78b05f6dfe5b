// GLib 2.x for the GLib backend, the RunLoopKitGLib product and what both share
// (RunLoopGSourceSupport): the main context API (g_main_context_prepare / query / check /
// dispatch, GSource) and the Unix fd sources.
#pragma once
#include <glib.h>
#include <glib-unix.h>

#include <poll.h>
#include <signal.h>
#include <sys/timerfd.h>
#include <time.h>
// ppoll(2), which glibc declares only under _GNU_SOURCE.
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
/// ppoll(2) over GLib's GPollFDs, which have struct pollfd's layout on Linux (GLib itself hands
/// them to poll); a NULL timeout waits until an event. The GLib backend waits here, with
/// nanosecond timeouts, over its loop's descriptors and the GMainContext's.
static inline int rlk_ppoll(GPollFD *fds, unsigned long count, const struct timespec *timeout) {
    return ppoll((struct pollfd *)fds, (nfds_t)count, timeout, NULL);
}

/// A timerfd on CLOCK_MONOTONIC, non-blocking and close-on-exec: a GLib source's deadline to the
/// nanosecond (GLib's own timeouts are whole milliseconds). -1 with errno set on failure.
static inline int rlk_timerfd_create(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
}
/// Arms `fd` to expire once, `seconds` + `nanoseconds` from now (relative); both zero disarms it.
static inline int rlk_timerfd_arm(int fd, long long seconds, long nanoseconds) {
    struct itimerspec spec = {{0, 0}, {(time_t)seconds, nanoseconds}};
    return timerfd_settime(fd, 0, &spec, NULL);
}
