# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

# Each backend alone, in a build folder of its own, so that a build without a backend's trait
# stays free of it (no module of another backend is there to be found).
for trait in URing Libevent GLib; do
    echo "== Build with only the $trait backend"
    build --scratch-path ".build-only-$trait" --disable-default-traits --traits "$trait"
done
