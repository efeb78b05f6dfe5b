// liburing, for the io_uring timer floor (Debian: liburing-dev).
#pragma once
#include <liburing.h>
