// GLib 2.x for the GLib backend and the RunLoopKitGLib product: the main context API
// (g_main_context_prepare / query / check / dispatch, GSource) and the Unix fd sources.
#pragma once
#include <glib.h>
#include <glib-unix.h>
