# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== The same under the Thread Sanitizer (stress at 1/100 size)"
build --build-tests --sanitize=thread --scratch-path .build-tsan --traits "$traits" "${debug_flags[@]}"
# A report fails the run: halt_on_error stops the process that raced, with a non-zero exit.
# GLib's own locking is invisible to TSan (libglib is not instrumented): our code states the
# order of what it hands through GLib instead, so the suppressions file is empty, and may only
# ever name a GLib function that runs no RunLoopKit code (scripts/tsan-suppressions.txt says why).
RUNLOOPKIT_STRESS_SCALE=0.01 RUNLOOPKIT_MODEL_STEPS=20000 \
    TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan-suppressions.txt" \
    timed swift test --skip-build --sanitize=thread --scratch-path .build-tsan --traits "$traits" "${debug_flags[@]}"
