# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Conformance, stress and model suites on epoll, io_uring, libevent and GLib (debug)"
# Stress at 1/10 size: enough rounds for the debug-only checks (lock order, invariants) under
# every stress test; the full size runs in the release step, where it costs a fifth of the CPU
# (on the two-core VM, the whole suite at full size took 10 CPU-minutes in this debug build and
# 2 in release; at 1/10 here it takes 1.5). The model runs at full size.
build --build-tests --traits "$traits"
RUNLOOPKIT_STRESS_SCALE="${RUNLOOPKIT_STRESS_SCALE-0.1}" timed swift test --skip-build --traits "$traits"
