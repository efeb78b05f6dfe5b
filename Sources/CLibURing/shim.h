// liburing for the io_uring backend; its static inline helpers import into Swift directly.
#pragma once
#include <liburing.h>
