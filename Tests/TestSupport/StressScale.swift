import Glibc

/// How big the stress, fault and teardown tests are: `RUNLOOPKIT_STRESS_SCALE`, a fraction of
/// the full size (default 1). `scripts/test` runs the full size against a release build, 0.1
/// in its debug run (under AddressSanitizer) and 0.01 under the Thread Sanitizer, which runs
/// code many times slower.
public let stressScale: Double = {
    guard let text = getenv("RUNLOOPKIT_STRESS_SCALE").map({ String(cString: $0) }) else { return 1 }
    guard let value = Double(text), value > 0 else {
        fatalError("RUNLOOPKIT_STRESS_SCALE must be a positive number, not \"\(text)\"")
    }
    return value
}()

/// `full` scaled by ``stressScale``, never below `minimum`: a scaled-down run still does
/// enough to exercise every path.
public func scaled(_ full: Int, minimum: Int = 1) -> Int {
    max(minimum, Int((Double(full) * stressScale).rounded()))
}
