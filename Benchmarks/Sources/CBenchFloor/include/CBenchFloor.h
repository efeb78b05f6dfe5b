// The floors of the wake and throughput scenarios, in C: what a C program does at best on this
// machine with the same kernel objects (an eventfd waited on in epoll), calling plain function
// pointers, allocating nothing per item, with the minimal wake protocol. Every RunLoopKit
// figure is read as a ratio to these, so they must be the machine's best, not a Swift loop's.
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// The work a floor runs: a function pointer and its context.
typedef void (*cbench_floor_fn)(void *_Nullable context);

// MARK: throughput

/// The throughput floor's queue: a consumer thread asleep in epoll_wait on an eventfd, and a
/// mutex-guarded array of {function, context} that posters append to and the consumer swaps
/// out whole. See queue.c for the wake protocol.
typedef struct cbench_floor_queue cbench_floor_queue;

/// Starts the consumer thread; NULL (errno set) when a descriptor or the thread cannot be had.
cbench_floor_queue *_Nullable cbench_floor_queue_start(void);

/// Appends `fn(context)` to the queue; wakes the consumer only if it announced it is asleep.
void cbench_floor_queue_post(cbench_floor_queue *_Nonnull queue, cbench_floor_fn _Nonnull fn,
                             void *_Nullable context);

/// Posts `fn(context)` `count` times, one `cbench_floor_queue_post` each: a C poster's loop.
void cbench_floor_queue_post_many(cbench_floor_queue *_Nonnull queue, cbench_floor_fn _Nonnull fn,
                                  void *_Nullable context, size_t count);

/// How many times a poster wrote the eventfd (one per sleep the consumer announced and a post
/// ended).
uint64_t cbench_floor_queue_wakes(cbench_floor_queue *_Nonnull queue);

/// Runs what is queued, ends the consumer thread, joins it and frees the queue.
void cbench_floor_queue_stop(cbench_floor_queue *_Nonnull queue);

/// The throughput scenario's count of blocks run, kept on the consumer thread: each
/// `cbench_floor_tally_bump` adds one; the one that reaches the total records the time
/// (CLOCK_MONOTONIC, ns) and signals whoever waits.
typedef struct cbench_floor_tally cbench_floor_tally;

cbench_floor_tally *_Nullable cbench_floor_tally_new(uint64_t total);

/// The item function: `context` is a `cbench_floor_tally`.
void cbench_floor_tally_bump(void *_Nullable context);

/// Waits until the total is reached, at most `seconds`; true when it was.
bool cbench_floor_tally_wait(cbench_floor_tally *_Nonnull tally, double seconds);

/// Blocks counted so far (read after the consumer is joined, or after the wait succeeded).
uint64_t cbench_floor_tally_count(const cbench_floor_tally *_Nonnull tally);

/// When the last block ran (CLOCK_MONOTONIC, ns); 0 before.
uint64_t cbench_floor_tally_end(const cbench_floor_tally *_Nonnull tally);

void cbench_floor_tally_free(cbench_floor_tally *_Nonnull tally);

// MARK: wake

/// The wake floor's loop: a thread asleep in epoll_wait on one eventfd, calling `fn(context)`
/// for each wake. See wake.c.
typedef struct cbench_floor_wake_loop cbench_floor_wake_loop;

/// Starts the loop thread. `read_first`: read the eventfd before calling `fn` (a descriptor
/// source's handler reads its descriptor as its work) rather than after (a wake's eventfd is
/// only a doorbell: the work runs first, the doorbell is reset before the next sleep).
cbench_floor_wake_loop *_Nullable cbench_floor_wake_loop_start(cbench_floor_fn _Nonnull fn,
                                                               void *_Nullable context,
                                                               bool read_first);

/// The eventfd a driver writes (8 bytes, any non-zero count) to wake the loop.
int cbench_floor_wake_loop_descriptor(const cbench_floor_wake_loop *_Nonnull loop);

/// Ends the loop thread, joins it, closes its descriptors and frees it.
void cbench_floor_wake_loop_stop(cbench_floor_wake_loop *_Nonnull loop);
