# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

# Each backend alone, so that a build without a backend's trait stays free of it. The three share
# one build folder: what RunLoopKit depends on (swift-nio's NIOCore, swift-collections, swift-log,
# …) is built once instead of three times, and only RunLoopKit's own targets, whose flags change
# with the traits, are built again. So that no module of another backend is there to be found (an
# import a trait does not guard would compile against it), the backends' modules and objects are
# deleted before each build: each is as free of the others as in a folder of its own.
scratch=.build-only
for trait in URing Libevent GLib; do
    echo "== Build with only the $trait backend"
    for backend in RunLoopEpoll RunLoopURing RunLoopLibevent RunLoopGLib; do
        rm -rf "$scratch/debug/$backend.build" "$scratch/debug/Modules/$backend".*
    done
    build --scratch-path "$scratch" --disable-default-traits --traits "$trait"
done
