import RunLoopKit
import TestSupport

/// The backends this build includes that can start on this machine: every conformance test
/// runs once per backend. One that cannot start (io_uring refused by a sandbox, say) is
/// reported by `BackendAvailabilityTests` with the reason: a failure when the run requires it
/// (`RUNLOOPKIT_REQUIRED_BACKENDS`), otherwise a skip, and its cases do not run.
let backends: [BackendKind] = startableBackends

/// The C function a backend's `register`, `modify` and `unregister` errors name: epoll's
/// `epoll_ctl`, io_uring's `io_uring_prep_poll_add`, libevent's `event_add`, and the GLib
/// backend's `ppoll` (it keeps Core's descriptors in its own `ppoll` set).
func registrationOperation(_ backend: BackendKind) -> String {
    ["epoll": "epoll_ctl", "uring": "io_uring_prep_poll_add", "libevent": "event_add", "glib": "ppoll"][
        backend.rawValue]!
}
