// libevent 2.1 for the libevent backend.
#pragma once
#include <event2/event.h>
#include <event2/thread.h>
