// The throughput floor: the smallest correct cross-thread work queue a C program writes.
//
// Posters append {function, context} to an array under a mutex; the array is preallocated and
// doubles when full, so a post allocates nothing once the array has reached its working size.
// The consumer swaps the whole array for its spare (empty, same kind) under the mutex and runs
// the items outside it, so the lock is held for an append or a pointer swap, never for work.
//
// The wake protocol, minimal and without a lost wake:
// - The consumer, holding the mutex, finds the array empty and sets `sleeping` in the same
//   critical section, then unlocks and waits in epoll_wait on the eventfd.
// - A poster, holding the mutex, appends; if it found the array empty and `sleeping` set, it
//   clears `sleeping` and, after unlocking, writes the eventfd. No other post writes it.
// The consumer's "empty, so I sleep" and a poster's "sleeping, so I wake it" are decided under
// the same mutex, so a post lands either before the check (the consumer sees it and does not
// sleep) or after the announcement (the poster writes). An eventfd stays readable until read,
// so a write that lands before the consumer reaches epoll_wait still ends that wait. Exactly
// one write per announced sleep, none while the consumer is draining: the cheapest protocol
// that cannot lose a wake (without spinning, which a run loop cannot afford while idle).
#include "CBenchFloor.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    cbench_floor_fn fn;
    void *context;
} item;

enum { initial_capacity = 4096 };

struct cbench_floor_queue {
    // The posters' side, guarded by `lock`.
    pthread_mutex_t lock;
    item *items;
    size_t count;
    size_t capacity;
    bool sleeping;  // the consumer found `items` empty and is (going) asleep
    bool quit;
    uint64_t wakes;
    // The consumer's own, on another cache line: its spare array, run outside the lock.
    _Alignas(64) item *spare;
    size_t spare_capacity;
    int event_fd;
    int epoll_fd;
    pthread_t thread;
};

static void reset(cbench_floor_queue *queue) {
    uint64_t value;
    (void)!read(queue->event_fd, &value, sizeof value);
}

static void *consume(void *argument) {
    cbench_floor_queue *queue = argument;
    // The eventfd was written for the last sleep and not read yet. It is read after the first
    // batch has run, not between the wake and the work: no poster writes it again before the
    // consumer announces its next sleep, which it does only after this read.
    bool rung = false;
    for (;;) {
        pthread_mutex_lock(&queue->lock);
        if (queue->count == 0) {
            if (queue->quit) {
                pthread_mutex_unlock(&queue->lock);
                return NULL;
            }
            if (rung) {
                // Woken with nothing to run (only `stop` does that): reset before sleeping.
                pthread_mutex_unlock(&queue->lock);
                reset(queue);
                rung = false;
                continue;
            }
            queue->sleeping = true;
            pthread_mutex_unlock(&queue->lock);
            struct epoll_event event;
            while (epoll_wait(queue->epoll_fd, &event, 1, -1) < 0 && errno == EINTR) {
            }
            rung = true;
            continue;
        }
        item *batch = queue->items;
        size_t count = queue->count;
        size_t capacity = queue->capacity;
        queue->items = queue->spare;
        queue->capacity = queue->spare_capacity;
        queue->count = 0;
        pthread_mutex_unlock(&queue->lock);
        for (size_t index = 0; index < count; index++) batch[index].fn(batch[index].context);
        queue->spare = batch;
        queue->spare_capacity = capacity;
        if (rung) {
            reset(queue);
            rung = false;
        }
    }
}

cbench_floor_queue *cbench_floor_queue_start(void) {
    cbench_floor_queue *queue = aligned_alloc(64, (sizeof *queue + 63) / 64 * 64);
    if (queue == NULL) return NULL;
    *queue = (cbench_floor_queue){.capacity = initial_capacity, .spare_capacity = initial_capacity};
    queue->items = malloc(initial_capacity * sizeof(item));
    queue->spare = malloc(initial_capacity * sizeof(item));
    queue->event_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    queue->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event event = {.events = EPOLLIN};
    if (queue->items == NULL || queue->spare == NULL || queue->event_fd < 0 || queue->epoll_fd < 0 ||
        epoll_ctl(queue->epoll_fd, EPOLL_CTL_ADD, queue->event_fd, &event) != 0) {
        goto fail;
    }
    pthread_mutex_init(&queue->lock, NULL);
    int result = pthread_create(&queue->thread, NULL, consume, queue);
    if (result != 0) {
        pthread_mutex_destroy(&queue->lock);
        errno = result;
        goto fail;
    }
    return queue;
fail:
    if (queue->event_fd >= 0) close(queue->event_fd);
    if (queue->epoll_fd >= 0) close(queue->epoll_fd);
    free(queue->items);
    free(queue->spare);
    free(queue);
    return NULL;
}

static void wake(cbench_floor_queue *queue) {
    uint64_t one = 1;
    (void)!write(queue->event_fd, &one, sizeof one);
}

void cbench_floor_queue_post(cbench_floor_queue *queue, cbench_floor_fn fn, void *context) {
    pthread_mutex_lock(&queue->lock);
    // `sleeping` is only ever set on an empty array; checking both says what the rule is.
    bool wakes = queue->count == 0 && queue->sleeping;
    if (queue->count == queue->capacity) {
        // Doubling: allocation is amortised away once the array reached its working size.
        item *grown = realloc(queue->items, 2 * queue->capacity * sizeof(item));
        if (grown == NULL) abort();
        queue->items = grown;
        queue->capacity *= 2;
    }
    queue->items[queue->count++] = (item){fn, context};
    if (wakes) {
        queue->sleeping = false;
        queue->wakes++;
    }
    pthread_mutex_unlock(&queue->lock);
    if (wakes) wake(queue);
}

void cbench_floor_queue_post_many(cbench_floor_queue *queue, cbench_floor_fn fn, void *context,
                                  size_t count) {
    for (size_t index = 0; index < count; index++) cbench_floor_queue_post(queue, fn, context);
}

uint64_t cbench_floor_queue_wakes(cbench_floor_queue *queue) {
    pthread_mutex_lock(&queue->lock);
    uint64_t wakes = queue->wakes;
    pthread_mutex_unlock(&queue->lock);
    return wakes;
}

void cbench_floor_queue_stop(cbench_floor_queue *queue) {
    pthread_mutex_lock(&queue->lock);
    queue->quit = true;
    bool wakes = queue->sleeping;
    queue->sleeping = false;
    pthread_mutex_unlock(&queue->lock);
    if (wakes) wake(queue);
    pthread_join(queue->thread, NULL);
    pthread_mutex_destroy(&queue->lock);
    close(queue->event_fd);
    close(queue->epoll_fd);
    free(queue->items);
    free(queue->spare);
    free(queue);
}

// MARK: the tally

struct cbench_floor_tally {
    // The consumer's: counted without a lock (one thread), published by `lock` at the end.
    uint64_t count;
    uint64_t total;
    uint64_t end;
    pthread_mutex_t lock;
    pthread_cond_t finished;
    bool done;
};

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

cbench_floor_tally *cbench_floor_tally_new(uint64_t total) {
    cbench_floor_tally *tally = calloc(1, sizeof *tally);
    if (tally == NULL) return NULL;
    tally->total = total;
    pthread_mutex_init(&tally->lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&tally->finished, &attributes);
    pthread_condattr_destroy(&attributes);
    return tally;
}

void cbench_floor_tally_bump(void *context) {
    cbench_floor_tally *tally = context;
    if (++tally->count != tally->total) return;
    tally->end = now_ns();
    pthread_mutex_lock(&tally->lock);
    tally->done = true;
    pthread_cond_signal(&tally->finished);
    pthread_mutex_unlock(&tally->lock);
}

bool cbench_floor_tally_wait(cbench_floor_tally *tally, double seconds) {
    uint64_t deadline = now_ns() + (uint64_t)(seconds * 1e9);
    struct timespec at = {.tv_sec = (time_t)(deadline / 1000000000u),
                          .tv_nsec = (long)(deadline % 1000000000u)};
    pthread_mutex_lock(&tally->lock);
    while (!tally->done && pthread_cond_timedwait(&tally->finished, &tally->lock, &at) != ETIMEDOUT) {
    }
    bool done = tally->done;
    pthread_mutex_unlock(&tally->lock);
    return done;
}

uint64_t cbench_floor_tally_count(const cbench_floor_tally *tally) { return tally->count; }

uint64_t cbench_floor_tally_end(const cbench_floor_tally *tally) { return tally->end; }

void cbench_floor_tally_free(cbench_floor_tally *tally) {
    pthread_cond_destroy(&tally->finished);
    pthread_mutex_destroy(&tally->lock);
    free(tally);
}
