// liburing for the io_uring backend; its static inline helpers import into Swift directly.
#pragma once
// System headers first: liburing.h defines _GNU_SOURCE, which would give this module a
// `fd_set` (`fds_bits`) that clashes with Glibc's (`__fds_bits`). Included first, they are
// read with the same feature macros as Glibc's Swift module.
#include <sys/types.h>
#include <sys/time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <signal.h>
#include <time.h>
#include <fcntl.h>
#include <liburing.h>
