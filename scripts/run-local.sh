#!/usr/bin/env bash
# `make run`: runs the agent in the foreground. With no account configured, it first starts
# the bundled reference server on 127.0.0.1:8080 (DEMO_PORT) and adds a local demo account
# (demo/demo); with the demo account, it starts that server whenever it is not running.
set -euo pipefail
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
state=${XDG_STATE_HOME:-$HOME/.local/state}/instant-upload

port=${DEMO_PORT:-8080}
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true; }
trap cleanup EXIT INT TERM

accounts=$("$bin/instant-upload" account list --json | tr -d ' \n')
demo_account=no
printf '%s' "$accounts" | grep -q "\"tus_url\":\"http://127.0.0.1:$port/files/\"" && demo_account=yes
agent_pid=$("$bin/instant-upload" status --json 2>/dev/null | sed -n 's/^ *"agent_pid" *: *\([0-9][0-9]*\).*/\1/p' | head -n 1 || true)

# The demo server, whenever the demo account needs it (or, with no account at all, for the
# demo account a new agent gets), unless something already answers on its port.
if [ "$demo_account" = yes ] || { [ "$accounts" = "[]" ] && [ -z "$agent_pid" ]; }; then
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "the demo server already answers on 127.0.0.1:$port"
    else
        mkdir -p "$state/reference-server"
        echo "starting the bundled reference server on 127.0.0.1:$port (user demo, password demo); what arrives is in $state/reference-server/tree/demo/"
        "$root/.venv/bin/python" "$root/reference-server/server.py" --data "$state/reference-server" \
            --host 127.0.0.1 --port "$port" --user demo:demo > "$state/reference-server.out" 2> "$state/reference-server.log" &
        server_pid=$!
        for _ in $(seq 1 100); do grep -q READY "$state/reference-server.out" 2>/dev/null && break; sleep 0.1; done
        grep -q READY "$state/reference-server.out" || { echo "the reference server did not start; see $state/reference-server.log" >&2; exit 1; }
        mkdir -p "$state/reference-server/tree/demo/Photos"
    fi
fi

# An agent already running (the service, a detached one, another `make run`): say so and
# follow its log instead of starting a second one (which would only meet its lock). Not
# with exec: Ctrl-C must also stop the demo server started above.
if [ -n "$agent_pid" ]; then
    echo "an agent is already running (pid $agent_pid), so no second one is started; \`instant-upload stop\` stops it."
    stops="Ctrl-C stops following${server_pid:+ and the demo server}, the agent keeps running"
    if command -v systemctl >/dev/null && [ "$(systemctl --user show -p MainPID --value instant-upload.service 2>/dev/null)" = "$agent_pid" ]; then
        echo "Following its log (journalctl --user -u instant-upload); $stops."
        journalctl --user -u instant-upload.service -f -n 20
        exit 0
    fi
    log=$(readlink "/proc/$agent_pid/fd/2" 2>/dev/null || true)
    if [ -n "$log" ] && [ -f "$log" ]; then
        echo "Following its log ($log); $stops."
        tail -n 20 -F "$log"
        exit 0
    fi
    echo "Its log goes to the terminal it was started from; here is the queue instead. $stops."
    "$bin/instant-upload" queue --follow
    exit 0
fi

if [ "$accounts" = "[]" ]; then
    # The WebDAV folder's address: discovery finds the tus server beside it at /files/.
    echo demo | "$bin/instant-upload" account add "http://127.0.0.1:$port/dav/demo/" --user demo --name demo --password-stdin
fi

cat <<MSG

The agent is starting. In a second terminal:
    $bin/instant-upload upload some.jpg --to /Photos
    $bin/instant-upload queue
(or \`make install\` to put instant-upload and share-to in ~/.local/bin). Ctrl-C stops it${server_pid:+ and the demo server}.

MSG
"$bin/instant-upload" run
