# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Every suite, stress at full size, against a release build, on every backend"
# A user's release build: no -enable-testing (the tests reach Core's internals through `package`
# access, not @testable import), in the allocation step's folder, whose release objects it reuses.
# Every test runs: the exit tests read each trap's message from their child's standard error
# (the message must survive -O), the stress tests run at full size (in optimised code, where a
# race has the least time to hide, which runs them in a fifth of a debug build's CPU time),
# and the debug-only tests are reported skipped, with their reason.
build -c release --build-tests --scratch-path .build-release --traits "$traits"
RUNLOOPKIT_STRESS_SCALE="${RUNLOOPKIT_STRESS_SCALE-1}" \
    timed swift test --skip-build -c release --scratch-path .build-release --traits "$traits"
