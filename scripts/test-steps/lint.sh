# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Formatting (swift format lint, configuration in .swift-format)"
scripts/format --lint
