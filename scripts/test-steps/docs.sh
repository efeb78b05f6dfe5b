# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Documentation (DocC, warnings as errors; every public symbol documented)"
scripts/check-docs
