#!/usr/bin/env bash
# `make sanitize`: the unit and engine tests (Platform, Queue, Transport, Engine) built and run
# under the address sanitizer, then under the thread sanitizer, each in a build folder of
# its own (.build/asan, .build/tsan), so neither disturbs the ordinary debug build.
#
#   scripts/sanitize.sh [address|thread ...]      both by default, address first
#
# The agents and tools the engine tests start are the same sanitized build. Every report,
# from the test process or from any program it started, is written to
# .build/sanitize/<sanitizer>/ (log_path), so one in a child whose output a test swallows
# still fails the run. Suppressions, where one cannot be avoided, live in
# scripts/sanitizers.supp, each with the reason.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SUITES=${SANITIZE_SUITES:-PlatformTests|QueueTests|TransportTests|EngineTests}
SWIFT=${SWIFT:-swift}
[ $# -gt 0 ] || set -- address thread

status=0
for sanitizer in "$@"; do
    case $sanitizer in
    address) short=asan ;;
    thread) short=tsan ;;
    *) echo "sanitize.sh: unknown sanitizer '$sanitizer' (address or thread)" >&2; exit 2 ;;
    esac
    reports=$ROOT/.build/sanitize/$short
    rm -rf "$reports" && mkdir -p "$reports"
    echo "== $sanitizer sanitizer: building into .build/$short"
    "$SWIFT" build --build-tests --sanitize="$sanitizer" --scratch-path ".build/$short" 2>&1 | tail -n 3

    # Leaks are not hunted here: Foundation keeps objects alive on purpose (caches, interned
    # strings, errors), and memory that grows is what `make soak` measures.
    export ASAN_OPTIONS="detect_leaks=0:log_path=$reports/report:halt_on_error=1"
    export TSAN_OPTIONS="log_path=$reports/report:halt_on_error=0:suppressions=$ROOT/scripts/sanitizers.supp"
    export SWIFT_BACKTRACE=enable=no
    echo "== $sanitizer sanitizer: $SUITES"
    # The thread sanitizer maps its shadow memory at fixed addresses, which the kernel's
    # widest address randomisation can collide with: run it without randomisation.
    run=()
    [ "$sanitizer" = thread ] && run=(setarch "$(uname -m)" -R)
    # Sanitized programs run several times slower, and the end-to-end tests run side by side
    # on two cores: a test that waits on one of the agent's own windows in real time (a
    # rename followed after a few seconds, a folder's listing kept for 30) can see it pass
    # before a slowed agent gets there. Such a test that fails beside the others runs again
    # on its own, and fails the run only if it fails there too; a sanitizer's report fails
    # it either way. The tests that failed, and how they did alone, are listed.
    results=$ROOT/.build/sanitize/$short-results
    rm -f "$results"*.xml
    if ! "${run[@]}" scripts/inotify-room.sh "$SWIFT" test --skip-build --scratch-path ".build/$short" --filter "$SUITES" \
            --skip WholeMachineTests --xunit-output "$results.xml"; then
        if ! failed=$(python3 scripts/failed-tests.py --pattern "$results-swift-testing.xml"); then
            echo "sanitize.sh: the tests failed under the $sanitizer sanitizer, and no failed test is named (a crash?)" >&2
            status=1
        else
            echo "== $sanitizer sanitizer: failed beside the others, run again alone:"
            python3 scripts/failed-tests.py --names "$results-swift-testing.xml" | sed 's/^/   /'
            if ! "${run[@]}" scripts/inotify-room.sh "$SWIFT" test --skip-build --scratch-path ".build/$short" --filter "$failed" \
                    --no-parallel --xunit-output "$results-alone.xml" \
                    || ! python3 scripts/failed-tests.py --passed "$results-swift-testing.xml" "$results-alone-swift-testing.xml"; then
                echo "sanitize.sh: the tests failed under the $sanitizer sanitizer, also alone" >&2
                status=1
            else
                echo "== $sanitizer sanitizer: each passed alone"
            fi
        fi
    fi
    found=$(find "$reports" -type f -size +0 | sort)
    if [ -n "$found" ]; then
        echo "sanitize.sh: the $sanitizer sanitizer reported (one file per process):" >&2
        for f in $found; do echo "--- $f" >&2; head -n 60 "$f" >&2; done
        status=1
    else
        echo "== $sanitizer sanitizer: no reports"
    fi
done
exit $status
