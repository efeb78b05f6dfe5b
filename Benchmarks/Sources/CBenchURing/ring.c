#include "CBenchURing.h"

#include <errno.h>
#include <liburing.h>
#include <stdlib.h>

void *cbench_uring_open(void) {
    struct io_uring *ring = malloc(sizeof *ring);
    if (ring == NULL) return NULL;
    int result = io_uring_queue_init(8, ring, 0);
    if (result < 0) {
        free(ring);
        errno = -result;
        return NULL;
    }
    return ring;
}

int cbench_uring_sleep_until(void *opaque, uint64_t nanoseconds) {
    struct io_uring *ring = opaque;
    struct __kernel_timespec at = {
        .tv_sec = (long long)(nanoseconds / 1000000000u),
        .tv_nsec = (long long)(nanoseconds % 1000000000u),
    };
    struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
    if (sqe == NULL) return -EBUSY;
    io_uring_prep_timeout(sqe, &at, 0, IORING_TIMEOUT_ABS);
    int result = io_uring_submit_and_wait(ring, 1);
    if (result < 0) return result;
    struct io_uring_cqe *cqe = NULL;
    while ((result = io_uring_wait_cqe(ring, &cqe)) == -EINTR) {}
    if (result < 0) return result;
    io_uring_cqe_seen(ring, cqe);
    return 0;
}

void cbench_uring_close(void *opaque) {
    io_uring_queue_exit(opaque);
    free(opaque);
}
