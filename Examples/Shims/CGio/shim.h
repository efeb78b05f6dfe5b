// GLib, GObject and GIO for the examples whose main loop is GLib's (glib-main-loop,
// glib-application). Not an example itself: it lives outside Sources/.
#pragma once
#include <gio/gio.h>
