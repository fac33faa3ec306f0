#!/usr/bin/env bash
# `make test`'s Swift tests, already built, in three processes side by side, then the tests
# that need the whole machine on their own.
#
# Why processes: most tests wait (for a server, an agent, a settle time, a child process),
# and many of those waits block a thread of Swift's cooperative pool, which has one thread
# per core. In one process on a 2-core machine two blocked tests stall all the others; three
# processes have three pools. The groups are the watcher tests, the engine tests, and every
# other target; the third is "all but the first two", so no test can fall between them.
#
# WholeMachineTests lower the kernel's inotify limits and count the machine's watcher
# threads: nothing else may run beside them, so they run last, alone.
#
# Each group's output goes to .build/test-logs/GROUP.log; a group that fails has its log
# printed whole, every group's summary line is printed at the end.
set -uo pipefail
cd "$(dirname "$0")/.."
SWIFT=${SWIFT:-swift}
logs=.build/test-logs
rm -rf "$logs" && mkdir -p "$logs"

names=(watcher engine others)
filters=(
    "--filter ^WatcherTests\\. --skip WholeMachineTests"
    "--filter ^EngineTests\\."
    "--skip ^(WatcherTests|EngineTests)\\."
)
# The test bundle is run directly: `swift test` holds a lock on .build for as long as its
# tests run, so three of them would only wait for each other.
bundle=$("$SWIFT" build --show-bin-path)/instant-uploadPackageTests.xctest
[ -x "$bundle" ] || { echo "test-swift.sh: $bundle is missing: build the tests first (swift build --build-tests)" >&2; exit 2; }
run_tests() { NO_COLOR=1 "$bundle" --testing-library swift-testing "$@"; }

pids=()
start=$SECONDS
for i in "${!names[@]}"; do
    # shellcheck disable=SC2086 # the filter is words on purpose
    run_tests ${filters[$i]} > "$logs/${names[$i]}.log" 2>&1 &
    pids+=($!)
done
echo "swift tests: ${names[*]} running side by side (logs in $logs/)"

status=0
for i in "${!names[@]}"; do
    if wait "${pids[$i]}"; then
        echo "swift tests: ${names[$i]} passed after $((SECONDS - start)) s"
    else
        echo "swift tests: ${names[$i]} FAILED after $((SECONDS - start)) s; its log:"
        cat "$logs/${names[$i]}.log"
        status=1
    fi
done

run_tests --filter WholeMachineTests > "$logs/whole-machine.log" 2>&1 || {
    echo "swift tests: WholeMachineTests FAILED; its log:"
    cat "$logs/whole-machine.log"
    status=1
}

echo "swift tests, each group's verdict:"
for log in "$logs"/*.log; do
    printf '  %-14s %s\n' "$(basename "$log" .log)" "$(grep -E 'Test run with [0-9]+ tests?' "$log" | tail -n 1 | sed -E 's/^[^A-Za-z]*//')"
done
total=$(grep -hoE 'Test run with [0-9]+ tests?' "$logs"/*.log | grep -oE '[0-9]+' | awk '{ s += $1 } END { print s + 0 }')
echo "swift tests: $total tests in all, $((SECONDS - start)) s"
exit $status
