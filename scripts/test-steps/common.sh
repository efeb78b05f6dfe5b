# shellcheck shell=bash
# What every step of scripts/test shares. Each step file sources this first and nothing else, so
# that `scripts/test STEP` runs that step alone; scripts/test runs each step in a subshell of its
# own, from the repository root, with -euo pipefail.

# shellcheck disable=SC2034 # the step files that source this use it
traits=Epoll,URing,Libevent,GLib
# Every backend of the build must start here: one that cannot (a sandbox that refuses
# io_uring_setup, say) fails the run, naming why, instead of skipping its tests. A caller may
# set its own list (empty: none required, each backend that cannot start is skipped, said).
# The suites and the allocation fixture read it, and the examples inherit it.
export RUNLOOPKIT_REQUIRED_BACKENDS="${RUNLOOPKIT_REQUIRED_BACKENDS-epoll,uring,libevent,glib}"

# Debug builds carry line tables, not full debug information: a sanitizer's report and a crash's
# backtrace still name file and line, and the compiler and linker do less (on the two-core VM a
# fresh TSan build took 11 % less CPU). The builds that never build tests (the trait builds,
# benchmarks, examples and docs, which share .build-plain, apart from .build, where a developer's
# own `swift build` keeps its flags) also skip the index store, which only test discovery reads
# (with both, every target but the tests took 16 % less CPU). scripts/check-docs passes the same
# flags, so it reuses what those built.
# shellcheck disable=SC2034 # the step files that source this use them
debug_flags=(-Xswiftc -gline-tables-only)
# shellcheck disable=SC2034
plain_flags=(-Xswiftc -gline-tables-only --disable-index-store)

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# Warnings in RunLoopKit's own sources or tests fail the run (dependencies are not ours).
check_warnings() {
    if grep -E "^$PWD/(Sources|Tests|Benchmarks/Sources|Examples/Sources)/.*warning:|^warning: " "$log" | sort -u | grep .; then
        echo "test: the build has warnings (above); RunLoopKit builds without warnings" >&2
        exit 1
    fi
}

# A duration in microseconds as 1m05.2s or 5.2s.
format_duration() {
    local tenths=$(($1 / 100000))
    if ((tenths >= 600)); then
        printf '%dm%02d.%ds' $((tenths / 600)) $((tenths % 600 / 10)) $((tenths % 10))
    else
        printf '%d.%ds' $((tenths / 10)) $((tenths % 10))
    fi
}

# The CPU time (user and system) of the processes this shell has waited for, in microseconds
# (/proc's cutime and cstime): beside a wall time it tells how busy the cores were meanwhile.
# This shell's own process: children_cpu runs in a command substitution's subshell.
ticks=$(getconf CLK_TCK) shell=$BASHPID
children_cpu() {
    local stat
    read -ra stat </proc/"$shell"/stat
    echo $(((stat[15] + stat[16]) * 1000000 / ticks))
}

# "wall 1m05.2s, cpu 1m50.1s" since the wall clock (EPOCHREALTIME without its point) and the
# children's CPU time given.
took() {
    echo "wall $(format_duration $((${EPOCHREALTIME/./} - $1))), cpu $(format_duration $(($(children_cpu) - $2)))"
}

# Runs a command and says how long it took, so that a step's time splits into its builds and runs.
timed() {
    local start=${EPOCHREALTIME/./} cpu status=0
    cpu=$(children_cpu)
    "$@" || status=$?
    echo "   ($(took "$start" "$cpu"): $*)"
    return "$status"
}

# Every build goes through here: swift build with the arguments given, its output kept for
# check_warnings, which runs after it.
build() {
    local start=${EPOCHREALTIME/./} cpu
    cpu=$(children_cpu)
    swift build "$@" 2>&1 | tee "$log"
    echo "   ($(took "$start" "$cpu"): swift build $*)"
    check_warnings
}
