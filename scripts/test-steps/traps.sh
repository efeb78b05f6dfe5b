# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Traps keep their message in release builds (no precondition, preconditionFailure, fatalError or preconditionIsolated)"
# Swift drops precondition messages under -O: every trap in Sources goes through Core's trap(_:)
# (Sources/Core/Support/Trap.swift), which keeps its message, and no other trap is allowed.
# Also Swift.precondition, and the actor checks (preconditionIsolated, assertIsolated),
# which drop their message the same way.
if grep -rnE "((^|[^A-Za-z0-9_.])|Swift\.)(precondition|preconditionFailure|fatalError)\(|(^|[^A-Za-z0-9_])(preconditionIsolated|assertIsolated)\(" \
    Sources --include=*.swift \
    | grep -vE "^[^:]+:[0-9]+:\s*//" | grep -v "^Sources/Core/Support/Trap.swift:"; then
    echo "test: a trap above bypasses trap(_:) / trap(unless:_:), so a release build drops its message" >&2
    exit 1
fi
