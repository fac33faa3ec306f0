#!/usr/bin/env bash
# `make test`'s guard that the tests never write into the caller's own folders: the XDG
# folders of whoever runs them (their config, data, state, cache, runtime and download
# folders, as their environment names them, or the defaults under $HOME). `mark` notes the
# moment before the tests; `check` fails, naming them, if anything in those folders was
# made or changed since.
set -euo pipefail
stamp=${UNTOUCHED_STAMP:-.build/untouched.stamp}
folders=(
    "${XDG_CONFIG_HOME:-$HOME/.config}"
    "${XDG_DATA_HOME:-$HOME/.local/share}"
    "${XDG_STATE_HOME:-$HOME/.local/state}"
    "${XDG_CACHE_HOME:-$HOME/.cache}"
    "${XDG_DOWNLOAD_DIR:-$HOME/Downloads}"
)
[ -n "${XDG_RUNTIME_DIR:-}" ] && folders+=("$XDG_RUNTIME_DIR")
case "${1:-}" in
mark)
    mkdir -p "$(dirname "$stamp")"
    touch "$stamp"
    ;;
check)
    [ -f "$stamp" ] || { echo "untouched.sh: no mark was made before the tests" >&2; exit 2; }
    changed=""
    for folder in "${folders[@]}"; do
        [ -d "$folder" ] || continue
        # Other programs' caches (compilers, pip) are not the product's: only its own names count.
        found=$(find "$folder" -newer "$stamp" \( -path '*instant-upload*' -o -path '*/Trash/*' -o -path '*/Local Drive*' \
                -o -name '*.desktop' -o -path '*/systemd/user/*' \) -print 2>/dev/null | head -n 20 || true)
        [ -n "$found" ] && changed+="$found"$'\n'
    done
    if [ -n "$changed" ]; then
        echo "the tests wrote into your own folders (every test must use folders of its own):" >&2
        printf '%s' "$changed" >&2
        exit 1
    fi
    ;;
*)
    echo "usage: untouched.sh mark|check" >&2
    exit 2
    ;;
esac
