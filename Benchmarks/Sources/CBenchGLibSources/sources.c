#include "CBenchGLibSources.h"

#include <glib-unix.h>
#include <glib.h>
#include <stdatomic.h>

/// A GSource with a flag: ready while the flag is set; dispatch clears it, then calls back.
typedef struct {
    GSource base;
    atomic_int raised;
    cbench_glib_callback callback;
    void *data;
} SignalSource;

static gboolean signal_prepare(GSource *source, gint *timeout) {
    *timeout = -1;
    return atomic_load_explicit(&((SignalSource *)source)->raised, memory_order_acquire) != 0;
}

static gboolean signal_check(GSource *source) {
    return atomic_load_explicit(&((SignalSource *)source)->raised, memory_order_acquire) != 0;
}

static gboolean signal_dispatch(GSource *source, GSourceFunc unused, gpointer unused_data) {
    (void)unused;
    (void)unused_data;
    SignalSource *signal = (SignalSource *)source;
    // Cleared before the call, so that a raise during the callback is served next pass.
    atomic_store_explicit(&signal->raised, 0, memory_order_relaxed);
    signal->callback(signal->data);
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs signal_funcs = {signal_prepare, signal_check, signal_dispatch, NULL, NULL, NULL};

void *cbench_glib_signal_source(void *context, cbench_glib_callback callback, void *data) {
    SignalSource *source = (SignalSource *)g_source_new(&signal_funcs, sizeof(SignalSource));
    atomic_init(&source->raised, 0);
    source->callback = callback;
    source->data = data;
    g_source_attach(&source->base, context);
    return source;
}

void cbench_glib_signal_raise(void *opaque) {
    SignalSource *source = opaque;
    atomic_store_explicit(&source->raised, 1, memory_order_release);
    g_main_context_wakeup(g_source_get_context(&source->base));
}

typedef struct {
    cbench_glib_callback callback;
    void *data;
} DescriptorCall;

static gboolean descriptor_ready(gint fd, GIOCondition condition, gpointer opaque) {
    (void)fd;
    (void)condition;
    DescriptorCall *call = opaque;
    call->callback(call->data);
    return G_SOURCE_CONTINUE;
}

void *cbench_glib_descriptor_source(void *context, int fd, cbench_glib_callback callback, void *data) {
    GSource *source = g_unix_fd_source_new(fd, G_IO_IN);
    DescriptorCall *call = g_new(DescriptorCall, 1);
    call->callback = callback;
    call->data = data;
    g_source_set_callback(source, G_SOURCE_FUNC(descriptor_ready), call, g_free);
    g_source_attach(source, context);
    return source;
}

void cbench_glib_source_remove(void *source) {
    g_source_destroy(source);
    g_source_unref(source);
}
