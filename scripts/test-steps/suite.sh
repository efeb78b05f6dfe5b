# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Conformance, stress, fault and model suites on every backend (debug, AddressSanitizer and LeakSanitizer)"
# One debug build serves the debug-only checks (lock order, invariants) and the memory checks:
# ASan's build is the debug build plus instrumentation, so a separate plain debug run checked
# nothing this one does not (it cost a build of 6 CPU-minutes and a run of 2 on the two-core VM).
# Stress at 1/10 size: enough rounds for the debug-only and memory checks under every stress
# test; the full size runs in the release step, where it costs a fifth of the CPU. The model
# runs at full size (100,000 steps), as it did in the plain debug run.
build --build-tests --sanitize=address --scratch-path .build-asan --traits "$traits" "${debug_flags[@]}"
# A report fails the run: halt_on_error stops the process at its first memory error, and a leak
# found at exit makes the process exit non-zero. The fixtures the tests start (child programs)
# inherit both variables, so they are checked too. The leak suppressions name the toolchain's own
# libraries only; scripts/lsan-suppressions.txt says why each is there.
RUNLOOPKIT_STRESS_SCALE="${RUNLOOPKIT_STRESS_SCALE-0.1}" \
    ASAN_OPTIONS="halt_on_error=1 detect_leaks=1" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt" \
    timed swift test --skip-build --sanitize=address --scratch-path .build-asan --traits "$traits" "${debug_flags[@]}"

echo "== The conformance suite's timer, mode, observer, source and block tests again, on virtual time"
# Each loop onLoopThread makes runs on virtual time that moves by itself (RUNLOOPKIT_TEST_TIME=virtual,
# TestSupport's TestLoopTime): each time the loop settles asleep until a deadline, a thread of its
# own moves the time there and wakes it. The suites listed make their loops with onLoopThread.
# The expectations are the same; the tests about real waiting or the kernel are disabled in this
# run, each with its reason (ConformanceTests/Support/VirtualTimeRun.swift).
virtual_suites='TestLoopTimeTests|TimerTests|ModeTests|ObserverTests|BlockTests|Version0SourceTests|Version1SourceTests'
RUNLOOPKIT_TEST_TIME=virtual RUNLOOPKIT_STRESS_SCALE="${RUNLOOPKIT_STRESS_SCALE-0.1}" \
    ASAN_OPTIONS="halt_on_error=1 detect_leaks=1" LSAN_OPTIONS="suppressions=$PWD/scripts/lsan-suppressions.txt" \
    timed swift test --skip-build --sanitize=address --scratch-path .build-asan --traits "$traits" "${debug_flags[@]}" \
    --filter "ConformanceTests\.($virtual_suites)/"
