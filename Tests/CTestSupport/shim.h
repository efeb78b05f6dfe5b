// Test-only C helpers: a seccomp filter that makes one system call fail, as a sandbox would
// (or as a kernel that refuses to watch a descriptor does), the calling thread's kernel id, and
// the GNU extensions TestSupport's ChildProcess spawns with.
#pragma once
#include <errno.h>
#include <stddef.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#ifndef __NR_epoll_pwait2
#define __NR_epoll_pwait2 441
#endif
#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

static const int rlk_test_sys_epoll_pwait2 = __NR_epoll_pwait2;
static const int rlk_test_sys_epoll_ctl = __NR_epoll_ctl;
static const int rlk_test_sys_io_uring_setup = __NR_io_uring_setup;
static const int rlk_test_sys_epoll_create1 = __NR_epoll_create1;

/// From now on, the calling thread's `number` system call fails with `error` (what older
/// container seccomp profiles answer for calls they do not know). Returns 0 on success.
static inline int rlk_test_deny_syscall(int number, int error) {
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)number, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)error & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog program = { .len = (unsigned short)(sizeof(filter) / sizeof(filter[0])), .filter = filter };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program, 0, 0);
}

#include <unistd.h>

/// The calling thread's kernel id (gettid(2)): on Linux the main thread's equals getpid().
static inline int rlk_test_gettid(void) { return (int)syscall(SYS_gettid); }

#include <fcntl.h>
#include <spawn.h>

// Both are GNU extensions, which Swift's Glibc module leaves out (it does not define
// _GNU_SOURCE); declared here as glibc (2.34 and later) defines them.
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
extern int pipe2(int descriptors[2], int flags);

/// Adds a file action that closes every descriptor from `from` up in the child.
static inline int rlk_test_spawn_close_from(posix_spawn_file_actions_t *actions, int from) {
    return posix_spawn_file_actions_addclosefrom_np(actions, from);
}

/// A pipe whose both ends are closed on exec (pipe2 with O_CLOEXEC): no other child inherits them.
static inline int rlk_test_pipe_closed_on_exec(int descriptors[2]) { return pipe2(descriptors, O_CLOEXEC); }
