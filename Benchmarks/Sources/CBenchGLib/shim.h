// GLib 2.x for the `glib` subject: a GMainLoop on its own context, work posted with
// g_main_context_invoke, timeouts, and the Unix descriptor source. The harness's own copy of
// the root package's CGLib shim (a target of another package is reachable only as a product).
#pragma once
#include <glib.h>
#include <glib-unix.h>
