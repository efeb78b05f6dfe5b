// What users import: the core, the backends this build includes, and the build's default.
@_exported import RunLoopCore

#if Epoll
@_exported import RunLoopEpoll
#endif
#if URing
@_exported import RunLoopURing
#endif
#if Libevent
@_exported import RunLoopLibevent
#endif
#if GLib
@_exported import RunLoopGLib
#endif
