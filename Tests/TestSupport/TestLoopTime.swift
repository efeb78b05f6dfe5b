import Glibc
import RunLoopKit
import RunLoopKitTesting

/// Which time the loops that ``onLoopThread(_:within:fileID:line:_:)`` makes run on: the real
/// clock, or, when `RUNLOOPKIT_TEST_TIME=virtual`, virtual time that moves by itself (each time
/// the loop settles asleep until a deadline, a thread of its own moves the time there; see
/// RunLoopKitTesting's `Loop.bindNewOnSelfAdvancingTime(backend:)`). `scripts/test` runs the conformance suite's timer, mode, observer,
/// source and block tests a second time so, their expectations unchanged; a test about the
/// kernel or about real waiting is disabled there with its reason (ConformanceTests' `realTimeOnly`).
public enum TestLoopTime {
    /// Whether this process's test loops run on self-advancing virtual time.
    public static let isVirtual: Bool = {
        guard let value = getenv("RUNLOOPKIT_TEST_TIME") else { return false }
        return String(cString: value) == "virtual"
    }()

    /// A new loop of `backend` bound to the calling thread, on this run's time.
    public static func makeLoop(_ backend: BackendKind) throws -> Loop {
        isVirtual ? try Loop.bindNewOnSelfAdvancingTime(backend: backend) : try Loop.current(backend: backend)
    }
}
