# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Conformance, stress and model suites on epoll, io_uring, libevent and GLib"
build --build-tests --traits "$traits"
timed swift test --skip-build --traits "$traits"
