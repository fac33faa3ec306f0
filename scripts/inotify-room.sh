#!/usr/bin/env bash
# Runs a command (the Swift tests) with room for the inotify instances it takes. The tests
# run side by side, and at their busiest some fifty agents run at once, each with two or
# three instances (the config file, each rule, Local Drive): past the kernel's limit per
# user (fs.inotify.max_user_instances, 128 on Debian) a rule waits 30 s to try again, and a
# test waiting for it fails. The limit is raised for the run, where it is lower, and put
# back after (a signal to this script alone puts it back once the tests have ended); without
# the right to change it, that is said and the tests run as they are.
set -uo pipefail
key=/proc/sys/fs/inotify/max_user_instances
want=1024
old=$(cat "$key")
if [ "$old" -lt "$want" ]; then
    if { echo "$want" > "$key"; } 2>/dev/null; then
        echo "inotify-room.sh: fs.inotify.max_user_instances raised from $old to $want for the tests; put back after"
        trap 'echo "$old" > "$key"' EXIT
        trap 'exit 130' INT
        trap 'exit 143' TERM
    else
        echo "inotify-room.sh: fs.inotify.max_user_instances is $old and cannot be raised here (it needs root): tests whose agents find no inotify instance may fail" >&2
    fi
fi
"$@"
