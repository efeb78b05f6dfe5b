# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Misuse traps and their messages (the exit tests) in a release build, on every backend"
# A user's release build: no -enable-testing (the tests reach Core's internals through `package`
# access, not @testable import), in the allocation step's folder, whose release objects it reuses.
# Only the suites with exit tests run (each exit test reads the trap's message from its child's
# standard error), with the debug-only tests, which must be reported skipped, and their sentinel.
exit_tests="MisuseTests|MainActorHandlerTests|DefaultBackendTrapTests|LoopThreadFinishTests|BadInput|LoggingTests"
exit_tests+="|LoggingStressTests|reusedDescriptorNeverReachesOldHandler|DebugInvariantTests|BuildConfigurationTests"
exit_tests+="|staleClaimDoesNotWakeNextSleep|detachOnAnotherThreadTraps|NIOMisuseTests|HandlerIsolationCheckTests"
build -c release --build-tests --scratch-path .build-release --traits "$traits"
timed swift test --skip-build -c release --scratch-path .build-release --traits "$traits" \
    --filter "$exit_tests"
