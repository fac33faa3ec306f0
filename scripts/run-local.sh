#!/usr/bin/env bash
# `make run`: runs the agent in the foreground. With no account configured, it first starts
# the bundled reference server on 127.0.0.1:8080 and adds a local demo account (demo/demo).
set -euo pipefail
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
state=${XDG_STATE_HOME:-$HOME/.local/state}/instant-upload
server_pid=""

# An agent already running (the service, a detached one, another `make run`): say so and
# follow its log instead of starting a second one (which would only meet its lock).
agent_pid=$("$bin/instant-upload" status --json 2>/dev/null | sed -n 's/^ *"agent_pid" *: *\([0-9][0-9]*\).*/\1/p' | head -n 1 || true)
if [ -n "$agent_pid" ]; then
    echo "an agent is already running (pid $agent_pid), so no second one is started."
    if command -v systemctl >/dev/null && [ "$(systemctl --user show -p MainPID --value instant-upload.service 2>/dev/null)" = "$agent_pid" ]; then
        echo "Following its log (journalctl --user -u instant-upload); Ctrl-C stops following, the agent keeps running."
        exec journalctl --user -u instant-upload.service -f -n 20
    fi
    log=$(readlink "/proc/$agent_pid/fd/2" 2>/dev/null || true)
    if [ -n "$log" ] && [ -f "$log" ]; then
        echo "Following its log ($log); Ctrl-C stops following, the agent keeps running."
        exec tail -n 20 -F "$log"
    fi
    echo "Its log goes to the terminal it was started from; here is the queue instead. Ctrl-C stops watching, the agent keeps running."
    exec "$bin/instant-upload" queue --follow
fi

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
