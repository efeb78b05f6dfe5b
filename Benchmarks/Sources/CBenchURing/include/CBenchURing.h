// The io_uring timer floor's ring, behind plain C functions: liburing.h defines _GNU_SOURCE
// and _XOPEN_SOURCE, which change glibc's own structs (fd_set's field names), so a Swift
// module that imports it next to Foundation fails to build in debug. Only this file's
// declarations reach Swift; liburing stays inside the C file.
#pragma once
#include <stdint.h>

/// An io_uring of eight entries, or NULL (errno set) when io_uring cannot start.
void *cbench_uring_open(void);

/// Waits on `ring` until CLOCK_MONOTONIC reads `nanoseconds` (an IORING_OP_TIMEOUT with
/// IORING_TIMEOUT_ABS); returns 0, or a negative errno.
int cbench_uring_sleep_until(void *ring, uint64_t nanoseconds);

/// Tears down a ring from cbench_uring_open.
void cbench_uring_close(void *ring);
