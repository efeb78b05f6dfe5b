# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

# Each backend alone, so that a build without a backend's trait stays free of it (every backend
# target is built in each, empty without its trait: its sources are inside #if TRAIT). The three
# build in .build-plain (debug, no tests), which the benchmarks, examples and docs steps share:
# what RunLoopKit depends on (swift-nio's NIOCore, swift-collections, swift-system, …) is built
# there once; RunLoopKit's own targets, whose flags change with the traits, are built again each
# time. The traits only take away dependencies on the backends (RunLoopKit imports one only with
# its trait), so before each build the backends' modules and objects are deleted: one the
# previous build made with its trait on cannot be found before this build has made it again, as
# in a folder of its own.
scratch=.build-plain
# Another root package (the examples', the harness's) may have left its build plan there: drop
# it, so that SwiftPM makes this package's.
rm -f "$scratch/debug.yaml"
# The backends are the targets RunLoopKit depends on under a trait, read from the manifest so
# that a renamed target cannot leave a stale name here (whose deletion would then do nothing);
# after each build every one of them must be where it is deleted from.
mapfile -t backends < <(sed -nE 's/.*\.target\(name: "(RunLoop[A-Za-z]+)", condition: \.when\(traits: .*/\1/p' Package.swift)
if [ ${#backends[@]} -eq 0 ]; then
    echo "test: found no target that RunLoopKit depends on under a trait in Package.swift" >&2
    exit 1
fi
for trait in URing Libevent GLib; do
    echo "== Build with only the $trait backend"
    for backend in "${backends[@]}"; do
        rm -rf "$scratch/debug/$backend.build" "$scratch/debug/Modules/$backend".*
    done
    build --scratch-path "$scratch" --disable-default-traits --traits "$trait" "${plain_flags[@]}"
    for backend in "${backends[@]}"; do
        if [ ! -e "$scratch/debug/Modules/$backend.swiftmodule" ]; then
            echo "test: the build made no $scratch/debug/Modules/$backend.swiftmodule (the folder's layout changed?)" >&2
            exit 1
        fi
    done
done
