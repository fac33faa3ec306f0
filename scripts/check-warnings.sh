#!/usr/bin/env bash
# `make test`'s guard against compiler warnings in Sources/: reads the output of
# `swift build` (one or more logs) and fails, naming each warning, when any comes from a
# file under Sources/ (Swift or C). Tests may warn; the product may not.
#
# A build only recompiles what changed, so a warning is printed once and then not again.
# To keep failing until it is fixed, the files that warned are touched: the next build
# compiles them again and prints the warning again.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
physical=$(cd "$root" && pwd -P)
# A log that is missing (no build ran) holds no warnings.
warnings=$(grep -shE "^($root|$physical)/Sources/[^:]+:[0-9]+:[0-9]+: warning: " "$@" | sort -u || true)
if [ -z "$warnings" ]; then
    exit 0
fi
echo "compiler warnings in Sources/ (fix them; CI fails on any):" >&2
printf '%s\n' "$warnings" >&2
printf '%s\n' "$warnings" | cut -d: -f1 | sort -u | while read -r file; do
    [ -f "$file" ] && touch "$file"
done
exit 1
