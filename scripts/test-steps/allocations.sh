# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Allocations per pass and per block, in a release build, on every backend"
build -c release --scratch-path .build-release --traits "$traits" --product AllocationFixture
bin=$(swift build -c release --scratch-path .build-release --traits "$traits" --show-bin-path)
# The fixture links the interposer too; preloading makes its malloc the first one found whatever
# else is loaded. The fixture fails first if the counter misses its own deliberate allocations.
LD_PRELOAD="$bin/libMallocInterposerSwift.so" timed "$bin/AllocationFixture" epoll uring libevent glib
