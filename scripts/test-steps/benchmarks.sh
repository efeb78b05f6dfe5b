# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Build the benchmark harness (Benchmarks/, a package of its own)"
# In .build-plain, the folder of the trait builds, the examples and the docs, whose debug builds of
# SwiftNIO and the other packages it reuses (scripts/bench builds it in release, in its own).
# SwiftPM does not notice a source file added to or removed from the root package when it
# builds a package that depends on it by path: drop the folder's build plan so it is remade.
rm -f .build-plain/debug.yaml
build --package-path Benchmarks --scratch-path "$PWD/.build-plain" "${plain_flags[@]}"
