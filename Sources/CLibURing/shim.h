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
// The kernel's io_uring header before liburing's copy of it (both guard LINUX_IO_URING_H): a
// module that also imports swift-system (whose C module includes the kernel's) must see one
// definition of `struct io_uring_sqe`, and the copies disagree on a field's type.
#include <linux/io_uring.h>
#include <liburing.h>
