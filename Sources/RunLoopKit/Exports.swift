// What users import: the core, the backends this build includes, and the build's default.
@_exported import RunLoopCore

#if Epoll
@_exported import RunLoopBackendEpoll
#endif
#if URing
@_exported import RunLoopBackendURing
#endif
#if Libevent
@_exported import RunLoopBackendLibevent
#endif
#if GLib
@_exported import RunLoopBackendGLib
#endif
