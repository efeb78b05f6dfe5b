// GLib 2.x for the GLib backend and the RunLoopKitGLib product: the main context API
// (g_main_context_prepare / query / check / dispatch, GSource) and the Unix fd sources.
#pragma once
#include <glib.h>
#include <glib-unix.h>

#include <poll.h>
#include <signal.h>
#include <time.h>
// ppoll(2), which glibc declares only under _GNU_SOURCE.
extern int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout, const sigset_t *sigmask);
/// ppoll(2) over GLib's GPollFDs, which have struct pollfd's layout on Linux (GLib itself hands
/// them to poll); a NULL timeout waits until an event. The GLib backend waits here, with
/// nanosecond timeouts, over its loop's descriptors and the GMainContext's.
static inline int rlk_ppoll(GPollFD *fds, unsigned long count, const struct timespec *timeout) {
    return ppoll((struct pollfd *)fds, (nfds_t)count, timeout, NULL);
}
