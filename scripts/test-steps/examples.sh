# shellcheck shell=bash
# shellcheck source=scripts/test-steps/common.sh
. scripts/test-steps/common.sh

echo "== Build the examples (Examples/, a package of its own) and run each once"
# In .build-plain, the folder of the trait builds, the benchmarks and the docs, whose debug builds of
# SwiftNIO and the other packages it reuses. SwiftPM does not notice a source file added to or
# removed from the root package when it builds a package that depends on it by path: drop the
# folder's build plan so it is remade.
rm -f .build-plain/debug.yaml
build --package-path Examples --scratch-path "$PWD/.build-plain" --traits "$traits" "${plain_flags[@]}"
bin=$(swift build --package-path Examples --scratch-path "$PWD/.build-plain" --traits "$traits" "${plain_flags[@]}" --show-bin-path)
# Every target in Examples/Sources is an example; its product is the executable that
# Examples/Package.swift names for it (EchoServer: echo-server, NIOClient: nio-client,
# GLibMainLoop: glib-main-loop, which no case rule derives). Each ends on its own; the timeout
# turns a hang into a failure.
for dir in Examples/Sources/*/; do
    target=$(basename "$dir")
    product=$(sed -nE "s/.*\.executable\(name: \"([^\"]+)\", targets: \[\"$target\"\]\).*/\1/p" Examples/Package.swift)
    if [ -z "$product" ]; then
        echo "test: Examples/Package.swift has no executable product for Examples/Sources/$target" >&2
        exit 1
    fi
    arguments=("")
    runner=()
    [ "$product" = tour ] && arguments=(epoll uring libevent glib) # the tour runs on each backend
    # The GTK example needs a display: a virtual one (xvfb-run starts Xvfb and stops it when the
    # program ends; the timeout is inside it, so a hang stops Xvfb too), GTK's cairo renderer
    # (no GL there) and no accessibility bus. It runs on each backend that can be attached to
    # GLib, clicks its button, checks its labels and saves a PNG of its window for a person to
    # look at (the path is printed), and fails naming each check that did not hold.
    if [ "$product" = gtk-application ]; then
        arguments=()
        for backend in epoll uring; do
            # One run's words joined by tabs (split below), so a path with spaces stays one word.
            arguments+=("$backend"$'\t'"--self-test"$'\t'"$PWD/.build-plain/gtk-application-$backend.png")
        done
        runner=(xvfb-run -a env GSK_RENDERER=cairo GTK_A11Y=none NO_AT_BRIDGE=1)
    fi
    for argument in "${arguments[@]}"; do
        words=()
        [ -n "$argument" ] && IFS=$'\t' read -ra words <<<"$argument"
        start=${EPOCHREALTIME/./}
        if ${runner[@]+"${runner[@]}"} timeout 60 "$bin/$product" ${words[@]+"${words[@]}"} >"$log" 2>&1; then
            echo "ok: $product${words[*]:+ ${words[*]}} ($(format_duration $((${EPOCHREALTIME/./} - start))))"
        else
            cat "$log"
            echo "test: the example $product${words[*]:+ ${words[*]}} failed (above)" >&2
            exit 1
        fi
    done
done

echo "== The examples' tests (Examples/Tests: a debounce, a retry, a heartbeat, on virtual time)"
# Their own folder, .build-examples-tests: test discovery reads the index store, which the builds
# in .build-plain go without (turning it on there would rebuild everything in it, SwiftNIO
# included, and the next step's build again). The tests' product needs only RunLoopKit and the
# three libraries (Examples/Libraries), so that is all this builds. check_warnings looks at
# Examples/Sources only: the libraries' and the tests' warnings are looked for here.
rm -f .build-examples-tests/debug.yaml
build --package-path Examples --scratch-path "$PWD/.build-examples-tests" --traits "$traits" "${debug_flags[@]}" \
    --product RunLoopKitExamplesPackageTests
if grep -E "^$PWD/Examples/(Libraries|Tests)/.*warning:" "$log" | sort -u | grep .; then
    echo "test: the examples' libraries or tests have warnings (above); they build without warnings" >&2
    exit 1
fi
# Each test covers minutes of virtual time in milliseconds of real time. A failure fails the
# step; each test has a time limit of a minute, and the run a timeout of its own, in case a call
# blocks for good (an advance that never returns).
start=${EPOCHREALTIME/./}
if timeout 300 swift test --package-path Examples --scratch-path "$PWD/.build-examples-tests" --traits "$traits" \
    "${debug_flags[@]}" --skip-build >"$log" 2>&1; then
    grep "Test run with" "$log" || true
    echo "ok: the examples' tests ($(format_duration $((${EPOCHREALTIME/./} - start))))"
else
    cat "$log"
    echo "test: the examples' tests failed (above)" >&2
    exit 1
fi
