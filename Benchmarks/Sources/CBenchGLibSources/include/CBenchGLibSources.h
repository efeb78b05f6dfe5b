// Two GSources for the `glib` subject, written in C because GLib calls their functions with
// pointers Swift would have to cast (GSourceFuncs, GUnixFDSourceFunc). Pointers to GLib's
// types travel as `void *`, so that this header needs no GLib header (Swift sees GLib's own
// declarations through the CBenchGLib module).
#pragma once

/// What a source calls on its context's thread.
typedef void (*cbench_glib_callback)(void *_Nullable data);

/// Attaches to the GMainContext `context` a source that calls `callback(data)` once each time
/// it has been raised (cbench_glib_signal_raise): a signalled source, like a CF or RunLoopKit
/// version-0 source. Returns the source (the context holds its own reference).
void *_Nonnull cbench_glib_signal_source(
    void *_Nonnull context, cbench_glib_callback _Nonnull callback, void *_Nullable data);

/// Raises `source` from any thread: sets its flag (release), then wakes its context with
/// g_main_context_wakeup. The source's check reads the flag after the wait.
void cbench_glib_signal_raise(void *_Nonnull source);

/// Attaches to `context` a Unix descriptor source (g_unix_fd_source_new, G_IO_IN) on `fd` that
/// calls `callback(data)` each time the descriptor is readable; the callback must drain it.
void *_Nonnull cbench_glib_descriptor_source(
    void *_Nonnull context, int fd, cbench_glib_callback _Nonnull callback, void *_Nullable data);

/// Detaches `source` from its context (g_source_destroy) and drops the caller's reference.
void cbench_glib_source_remove(void *_Nonnull source);
