# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Build the benchmark harness (Benchmarks/, a package of its own)"
build --package-path Benchmarks
