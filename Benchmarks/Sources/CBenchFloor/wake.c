// The wake floor: a thread asleep in epoll_wait on one eventfd, calling a function pointer for
// each wake — what a C program's loop does at best when another thread hands it work with the
// kernel object every epoll-based loop uses. Nothing is allocated after the start.
//
// Order of the work and the reset: for a doorbell (`read_first` false: a post, a signal) the
// work runs first and the eventfd is read after, before the next wait; that is correct because
// the reset happens before the thread sleeps again (a write after the read leaves the eventfd
// readable, and the next epoll_wait returns at once), and it is the cheapest order (the read,
// a system call, is not between the wake and the work). A descriptor source's handler reads its
// descriptor as its work (`read_first` true), as every subject's handler does.
//
// A second eventfd ends the loop.
#include "CBenchFloor.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

struct cbench_floor_wake_loop {
    cbench_floor_fn fn;
    void *context;
    bool read_first;
    int event_fd;
    int quit_fd;
    int epoll_fd;
    pthread_t thread;
};

static void *run(void *argument) {
    cbench_floor_wake_loop *loop = argument;
    for (;;) {
        struct epoll_event event;
        int count = epoll_wait(loop->epoll_fd, &event, 1, -1);
        if (count < 1) continue;  // EINTR
        if (event.data.fd == loop->quit_fd) return NULL;
        uint64_t value;
        if (loop->read_first) {
            (void)!read(loop->event_fd, &value, sizeof value);
            loop->fn(loop->context);
        } else {
            loop->fn(loop->context);
            (void)!read(loop->event_fd, &value, sizeof value);
        }
    }
}

static int watch(int epoll_fd, int fd) {
    struct epoll_event event = {.events = EPOLLIN, .data.fd = fd};
    return epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &event);
}

cbench_floor_wake_loop *cbench_floor_wake_loop_start(cbench_floor_fn fn, void *context, bool read_first) {
    cbench_floor_wake_loop *loop = malloc(sizeof *loop);
    if (loop == NULL) return NULL;
    *loop = (cbench_floor_wake_loop){.fn = fn, .context = context, .read_first = read_first};
    loop->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop->quit_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    loop->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->event_fd >= 0 && loop->quit_fd >= 0 && loop->epoll_fd >= 0 &&
        watch(loop->epoll_fd, loop->event_fd) == 0 && watch(loop->epoll_fd, loop->quit_fd) == 0) {
        int result = pthread_create(&loop->thread, NULL, run, loop);
        if (result == 0) return loop;
        errno = result;
    }
    if (loop->event_fd >= 0) close(loop->event_fd);
    if (loop->quit_fd >= 0) close(loop->quit_fd);
    if (loop->epoll_fd >= 0) close(loop->epoll_fd);
    free(loop);
    return NULL;
}

int cbench_floor_wake_loop_descriptor(const cbench_floor_wake_loop *loop) { return loop->event_fd; }

void cbench_floor_wake_loop_stop(cbench_floor_wake_loop *loop) {
    uint64_t one = 1;
    (void)!write(loop->quit_fd, &one, sizeof one);
    pthread_join(loop->thread, NULL);
    close(loop->event_fd);
    close(loop->quit_fd);
    close(loop->epoll_fd);
    free(loop);
}
