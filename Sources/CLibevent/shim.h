// libevent 2.1 for the libevent backend.
#pragma once
// System headers first: libevent's event-config.h defines _GNU_SOURCE, which would give this
// module a `fd_set` (`fds_bits`) that clashes with Glibc's (`__fds_bits`). Included first, they
// are read with the same feature macros as Glibc's Swift module.
#include <sys/types.h>
#include <sys/time.h>
#include <event2/event.h>
#include <event2/thread.h>
