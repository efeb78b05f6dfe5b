# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== The same under AddressSanitizer and LeakSanitizer (stress at 1/100 size)"
build --build-tests --sanitize=address --scratch-path .build-asan --traits "$traits"
# A report fails the run: halt_on_error stops the process at its first memory error, and a leak
# found at exit makes the process exit non-zero. The fixtures the tests start (child programs)
# inherit both variables, so they are checked too. The leak suppressions name the toolchain's own
# libraries only; scripts/lsan-suppressions.txt says why each is there.
RUNLOOPKIT_STRESS_SCALE=0.01 RUNLOOPKIT_MODEL_STEPS=20000 ASAN_OPTIONS="halt_on_error=1 detect_leaks=1" \
    LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt" \
    timed swift test --skip-build --sanitize=address --scratch-path .build-asan --traits "$traits"
