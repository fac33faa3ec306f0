#!/usr/bin/env bash
# Runs a second command beside the first, so that the time one spends waiting (on servers,
# processes, the disk) the other spends computing:
#
#   scripts/beside.sh LOG SECOND -- FIRST...
#
# FIRST runs in the foreground with its output as it comes; SECOND (one shell command) runs
# in the background with its output kept in LOG and shown once FIRST has ended. Fails when
# either failed, after both ended.
set -uo pipefail
log=$1 second=$2
shift 2
[ "${1:-}" = "--" ] && shift
mkdir -p "$(dirname "$log")"
bash -o pipefail -c "$second" >"$log" 2>&1 &
pid=$!
"$@"
first=$?
wait "$pid"
other=$?
echo "--- $second (ran beside: $*) ---"
cat "$log"
[ "$other" = 0 ] || echo "beside.sh: '$second' failed ($other); its output is above and in $log" >&2
[ "$first" = 0 ] && [ "$other" = 0 ]
