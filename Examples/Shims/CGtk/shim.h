// GTK 4's C API (with GLib, GObject and GIO, which it includes) for the gtk-application
// example (Debian: libgtk-4-dev). Not an example itself: it lives outside Sources/.
#pragma once
#include <gtk/gtk.h>
