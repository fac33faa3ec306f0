#!/usr/bin/env bash
# `make run`: runs the agent in the foreground. With no account configured, it first starts
# the bundled reference server on 127.0.0.1:8080 and adds a local demo account (demo/demo).
set -euo pipefail
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
state=${XDG_STATE_HOME:-$HOME/.local/state}/instant-upload
server_pid=""

cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

accounts=$("$bin/instant-upload" account list --json | tr -d ' \n')
if [ "$accounts" = "[]" ] || printf '%s' "$accounts" | grep -q '"tus_url":"http://127.0.0.1:8080/files/"'; then
    mkdir -p "$state/reference-server"
    echo "no account configured: starting the bundled reference server on 127.0.0.1:8080 (user demo, password demo)"
    "$root/.venv/bin/python" "$root/reference-server/server.py" --data "$state/reference-server" \
        --host 127.0.0.1 --port 8080 --user demo:demo > "$state/reference-server.out" 2> "$state/reference-server.log" &
    server_pid=$!
    for _ in $(seq 1 100); do grep -q READY "$state/reference-server.out" 2>/dev/null && break; sleep 0.1; done
    grep -q READY "$state/reference-server.out" || { echo "the reference server did not start; see $state/reference-server.log" >&2; exit 1; }
    mkdir -p "$state/reference-server/tree/demo/Photos"
fi
if [ "$accounts" = "[]" ]; then
    # The WebDAV folder's address: discovery finds the tus server beside it at /files/.
    echo demo | "$bin/instant-upload" account add http://127.0.0.1:8080/dav/demo/ --user demo --name demo --password-stdin
fi

cat <<MSG

The agent is starting. In a second terminal:
    $bin/instant-upload upload some.jpg --to /Photos
    $bin/instant-upload queue
(or \`make install\` to put instant-upload and share-to in ~/.local/bin). Ctrl-C stops it.

MSG
"$bin/instant-upload" run
