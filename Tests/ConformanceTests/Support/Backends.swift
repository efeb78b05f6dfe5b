import RunLoopKit
import TestSupport

/// The backends this build includes that can start on this machine: every conformance test
/// runs once per backend. One that cannot start (io_uring refused by a sandbox, say) is
/// reported by `BackendAvailabilityTests` with the reason: a failure when the run requires it
/// (`RUNLOOPKIT_REQUIRED_BACKENDS`), otherwise a skip, and its cases do not run.
let backends: [BackendKind] = startableBackends
