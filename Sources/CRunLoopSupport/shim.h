// Declarations Core needs that Glibc's Swift module does not expose.
#pragma once
#include <sys/syscall.h>
#include <unistd.h>
#include <sys/eventfd.h>

/// The kernel thread id of the calling thread (gettid(2)); the main thread's equals getpid().
static inline int rlk_gettid(void) { return (int)syscall(SYS_gettid); }
