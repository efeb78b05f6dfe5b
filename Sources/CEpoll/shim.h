// epoll for the epoll backend (not part of Glibc's Swift module).
#pragma once
#include <sys/epoll.h>
#include <errno.h>
