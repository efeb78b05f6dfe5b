import Testing

/// Whether this test target was compiled with `DEBUG` set, as SwiftPM sets it in a debug build.
/// Core's debug-build hooks and invariant checks exist only then, so a test that needs them is
/// `.enabled(if: isDebugBuild, "why")`: a release run reports it skipped, with the reason,
/// instead of passing with no expectation.
let isDebugBuild: Bool = {
    #if DEBUG
    true
    #else
    false
    #endif
}()

/// The debug-only tests' sentinel: a debug build that did not set `DEBUG` would skip them all
/// silently (each would be reported skipped as if this were a release build).
@Suite("Build configuration")
struct BuildConfigurationTests {
    @Test("an unoptimised (debug) build sets DEBUG, so that the debug-only tests run")
    func debugSetInDebugBuilds() {
        let assertsLikeDebug = hasDebugAssertConfiguration()
        #expect(
            isDebugBuild == assertsLikeDebug,
            "DEBUG is \(isDebugBuild ? "set" : "not set") in a build whose assertion configuration is \(assertsLikeDebug ? "debug" : "release"); the debug-only tests would be skipped"
        )
    }
}

/// The build's assertion configuration, behind a call the compiler does not fold: folded, the
/// expectation above is constant, and the compiler warns that its failure path is never run.
@inline(never)
func hasDebugAssertConfiguration() -> Bool { _isDebugAssertConfiguration() }
