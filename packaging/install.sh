#!/bin/sh
# Installs or removes instant-upload: both programs, the file-manager entries, the systemd
# user unit, the panel status icon's pictures and its login entry, man pages and shell
# completions. `make install` / `make uninstall` / `make deb` call it; see packaging/README.md
# for where each file goes.
#
#   install.sh install BIN_DIR [--no-tray]
#                                  copies the programs from BIN_DIR; --no-tray leaves out the
#                                  entry that starts the status icon at login
#   install.sh uninstall           removes exactly what the manifest lists
#
# Environment: PREFIX (default $HOME/.local), DESTDIR (a staging root, for packages),
# SYSTEM=1 for a system-wide layout (/usr: no per-person script folders, the login entry in
# /etc/xdg/autostart, no manifest).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
PREFIX=${PREFIX:-$HOME/.local}
DESTDIR=${DESTDIR:-}
SYSTEM=${SYSTEM:-0}
bindir=$PREFIX/bin
datadir=$PREFIX/share
if [ "$SYSTEM" = 1 ]; then
    systemd_user_dir=$PREFIX/lib/systemd/user
    zsh_dir=$datadir/zsh/vendor-completions
    # Nautilus and Caja read scripts only from each person's folders; the package keeps
    # copies to link from there (see share-to(1)).
    nautilus_dir=$datadir/instant-upload/nautilus-scripts
    caja_dir=$datadir/instant-upload/caja-scripts
    # Every session reads /etc/xdg/autostart (XDG_CONFIG_DIRS), whatever the PREFIX.
    autostart_dir=/etc/xdg/autostart
    manifest=
    servicemenu_mode=0644
else
    systemd_user_dir=$datadir/systemd/user
    zsh_dir=$datadir/zsh/site-functions
    nautilus_dir=${XDG_DATA_HOME:-$HOME/.local/share}/nautilus/scripts
    caja_dir=${XDG_CONFIG_HOME:-$HOME/.config}/caja/scripts
    autostart_dir=${XDG_CONFIG_HOME:-$HOME/.config}/autostart
    manifest=$datadir/instant-upload/install-manifest
    # Plasma 6 runs a person's own service menus only when they are executable.
    servicemenu_mode=0755
fi

# Folders this run created (deepest last) and files it wrote, for the manifest.
created_dirs=""
written=""

make_dir() {
    # Creates $1 and its missing parents, remembering each one made.
    missing=""
    d=$DESTDIR$1
    while [ ! -d "$d" ]; do missing="$d
$missing"; d=$(dirname "$d"); done
    printf '%s' "$missing" | while IFS= read -r m; do [ -n "$m" ] && mkdir -m 0755 "$m"; done
    created_dirs="$created_dirs$missing"
}

put() {
    # put SOURCE TARGET MODE: copies SOURCE with @BINDIR@ replaced by the installed folder.
    make_dir "$(dirname "$2")"
    sed "s|@BINDIR@|$bindir|g" "$1" > "$DESTDIR$2.tmp"
    chmod "$3" "$DESTDIR$2.tmp"
    mv -f "$DESTDIR$2.tmp" "$DESTDIR$2"
    written="$written$2
"
}

put_binary() {
    # Installed without its symbol tables (the Swift runtime's metadata stays): a third of the size.
    make_dir "$(dirname "$2")"
    install -m 0755 "$1" "$DESTDIR$2.tmp"
    strip --strip-unneeded --remove-section=.comment --remove-section=.note "$DESTDIR$2.tmp"
    mv -f "$DESTDIR$2.tmp" "$DESTDIR$2"
    written="$written$2
"
}

put_link() {
    # put_link TARGET LINK: LINK names TARGET (a name in the same folder).
    make_dir "$(dirname "$2")"
    ln -sfn "$1" "$DESTDIR$2"
    written="$written$2
"
}

put_man() {
    make_dir "$(dirname "$2")"
    gzip -9n -c "$1" > "$DESTDIR$2"
    chmod 0644 "$DESTDIR$2"
    written="$written$2
"
}

refresh_icon_cache() {
    # Panels find hicolor's icons without a cache; one that is already there would hide the
    # new ones until rebuilt, so only an existing cache is rebuilt, never a new one made.
    # (The Debian package stages no cache: hicolor-icon-theme's trigger rebuilds the system's.)
    theme=$DESTDIR$datadir/icons/hicolor
    [ -f "$theme/icon-theme.cache" ] || return 0
    command -v gtk-update-icon-cache >/dev/null 2>&1 || return 0
    no_index=
    [ -f "$theme/index.theme" ] || no_index=--ignore-theme-index
    gtk-update-icon-cache --quiet --force $no_index "$theme" ||
        echo "install.sh: could not rebuild $theme/icon-theme.cache; run gtk-update-icon-cache there" >&2
}

do_install() {
    bin=${1:?install.sh install BIN_DIR [--no-tray]}
    tray=1
    shift
    for option in "$@"; do
        case "$option" in
            --no-tray) tray=0 ;;
            *) echo "install.sh: unknown option $option (install.sh install BIN_DIR [--no-tray])" >&2; exit 2 ;;
        esac
    done
    [ -x "$bin/instant-upload" ] || { echo "install.sh: $bin/instant-upload is missing; build it first (make dist)" >&2; exit 1; }
    put_binary "$bin/instant-upload" "$bindir/instant-upload"
    # share-to is the same program under a second name.
    put_link instant-upload "$bindir/share-to"
    put "$here/applications/instant-upload-share-to.desktop" "$datadir/applications/instant-upload-share-to.desktop" 0644
    put "$here/thunar/instant-upload-share-to.desktop" "$datadir/Thunar/sendto/instant-upload-share-to.desktop" 0644
    put "$here/kio/instant-upload-share-to.desktop" "$datadir/kio/servicemenus/instant-upload-share-to.desktop" "$servicemenu_mode"
    put "$here/nemo/instant-upload.nemo_action" "$datadir/nemo/actions/instant-upload.nemo_action" 0644
    put "$here/nautilus/Send to server" "$nautilus_dir/Send to server" 0755
    put "$here/caja/Send to server" "$caja_dir/Send to server" 0755
    put "$here/systemd/instant-upload.service" "$systemd_user_dir/instant-upload.service" 0644
    put_man "$here/man/instant-upload.1" "$datadir/man/man1/instant-upload.1.gz"
    put_man "$here/man/share-to.1" "$datadir/man/man1/share-to.1.gz"
    put "$here/completions/instant-upload.bash" "$datadir/bash-completion/completions/instant-upload" 0644
    put "$here/completions/share-to.bash" "$datadir/bash-completion/completions/share-to" 0644
    put "$here/completions/_instant-upload" "$zsh_dir/_instant-upload" 0644
    put "$here/completions/_share-to" "$zsh_dir/_share-to" 0644
    put "$here/completions/instant-upload.fish" "$datadir/fish/vendor_completions.d/instant-upload.fish" 0644
    put "$here/completions/share-to.fish" "$datadir/fish/vendor_completions.d/share-to.fish" 0644
    for state in done uploading waiting attention; do
        put "$here/icons/hicolor/scalable/status/instant-upload-$state.svg" \
            "$datadir/icons/hicolor/scalable/status/instant-upload-$state.svg" 0644
    done
    refresh_icon_cache
    if [ "$tray" = 1 ]; then
        put "$here/autostart/instant-upload-tray.desktop" "$autostart_dir/instant-upload-tray.desktop" 0644
    fi
    if [ -n "$manifest" ]; then
        make_dir "$(dirname "$manifest")"
        # An earlier install's folders stay listed: they were ours then too. Its files that
        # this one did not write (the login entry, after --no-tray) go now.
        old_dirs=""
        if [ -f "$DESTDIR$manifest" ]; then
            old_dirs=$(sed -n 's/^dir //p' "$DESTDIR$manifest")
            sed -n 's/^file //p' "$DESTDIR$manifest" | while IFS= read -r f; do
                [ -n "$f" ] && [ "$f" != "$manifest" ] || continue
                printf '%s' "$written" | grep -qxF -- "$f" || rm -f "$DESTDIR$f"
            done
        fi
        {
            printf '%s' "$written" | sed '/^$/d; s/^/file /'
            echo "file $manifest"
            { printf '%s\n' "$old_dirs"; printf '%s' "$created_dirs" | sed "s|^$DESTDIR||"; } | sed '/^$/d' | sort -u -r | sed 's/^/dir /'
        } > "$DESTDIR$manifest"
        echo "installed into $PREFIX; \`make uninstall\` removes everything listed in $manifest"
    fi
}

do_uninstall() {
    if [ ! -f "$DESTDIR$manifest" ]; then
        echo "nothing to remove: $manifest does not exist (was it installed with another PREFIX?)" >&2
        exit 1
    fi
    # Files first (the manifest among them), then the folders the install made, deepest
    # first, each only when nothing else has come to live in it.
    files=$(sed -n 's/^file //p' "$DESTDIR$manifest")
    dirs=$(sed -n 's/^dir //p' "$DESTDIR$manifest" | sort -r)
    printf '%s\n' "$files" | while IFS= read -r f; do [ -n "$f" ] && rm -f "$DESTDIR$f"; done
    printf '%s\n' "$dirs" | while IFS= read -r d; do [ -n "$d" ] && { rmdir "$DESTDIR$d" 2>/dev/null || true; }; done
    refresh_icon_cache
    echo "removed instant-upload from $PREFIX"
}

case "${1:-}" in
    install) shift; do_install "$@" ;;
    uninstall) do_uninstall ;;
    *) echo "usage: install.sh install BIN_DIR [--no-tray] | install.sh uninstall" >&2; exit 2 ;;
esac
