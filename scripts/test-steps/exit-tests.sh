# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Misuse traps and their messages (the exit tests) in a release build, on every backend"
# The test targets use @testable import, which a release build allows with -enable-testing. Only
# the suites with exit tests run (each exit test reads the trap's message from its child's
# standard error), with the debug-only tests, which must be reported skipped, and their sentinel.
exit_tests="MisuseTests|MainActorHandlerTests|DefaultBackendTrapTests|LoopThreadFinishTests|BadInput|LoggingTests"
exit_tests+="|LoggingStressTests|reusedDescriptorNeverReachesOldHandler|DebugInvariantTests|BuildConfigurationTests"
exit_tests+="|staleClaimDoesNotWakeNextSleep|detachOnAnotherThreadTraps|NIOMisuseTests|HandlerIsolationCheckTests"
build -c release --build-tests --scratch-path .build-release-tests --traits "$traits" -Xswiftc -enable-testing
timed swift test --skip-build -c release --scratch-path .build-release-tests --traits "$traits" -Xswiftc -enable-testing \
    --filter "$exit_tests"
