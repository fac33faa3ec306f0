#!/bin/sh
# Builds the Debian package from release binaries: a system-wide install (/usr, and the status
# icon's login entry in /etc/xdg/autostart) staged by install.sh (one stripped program,
# share-to a link to it), with its library dependencies worked out by dpkg-shlibdeps.
#
#   build-deb.sh BIN_DIR VERSION OUT_DIR      -> OUT_DIR/instant-upload_VERSION_ARCH.deb
set -eu

bin=${1:?build-deb.sh BIN_DIR VERSION OUT_DIR}
version=${2:?build-deb.sh BIN_DIR VERSION OUT_DIR}
out=${3:?build-deb.sh BIN_DIR VERSION OUT_DIR}
here=$(cd "$(dirname "$0")" && pwd)
arch=$(dpkg --print-architecture)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Staged where dpkg-shlibdeps expects a package's files (debian/PACKAGE, beside
# debian/control), so it works out the dependencies without a warning.
stage=$out/debian/instant-upload
rm -rf "$out/debian" "$out/root"
mkdir -p "$stage/DEBIAN"
printf 'Source: instant-upload\n\nPackage: instant-upload\nArchitecture: any\n' > "$out/debian/control"

# install.sh strips the program; share-to is a link to it.
SYSTEM=1 PREFIX=/usr DESTDIR=$stage sh "$here/../install.sh" install "$bin"

doc=$stage/usr/share/doc/instant-upload
mkdir -p "$doc"
install -m 0644 "$here/copyright" "$doc/copyright"
sed "s/@VERSION@/$version/; s/@DATE@/$(date -R -d @"${SOURCE_DATE_EPOCH:-$(date +%s)}")/" "$here/changelog" | gzip -9n > "$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

depends=$(cd "$out" && dpkg-shlibdeps -O "debian/instant-upload/usr/bin/instant-upload" | sed -n 's/^shlibs:Depends=//p')
# The watcher reads EXIF dates through libexif, loaded at the first one (Sources/CExif).
case "$depends" in *libexif12*) ;; *) depends="$depends, libexif12" ;; esac
# libcurl is loaded at the first request, not linked (Sources/CCurl), so no linker sees it.
depends="$depends, libcurl4 (>= 7.74.0)"

sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
    -e "s/@SIZE@/$(du -sk --exclude=DEBIAN "$stage" | cut -f1)/" "$here/control" > "$stage/DEBIAN/control"
# dpkg checksums every installed file for `dpkg --verify`; files under /etc (the status
# icon's login entry) are conffiles instead, which dpkg checksums itself and keeps a person's
# edits to on upgrade (`dpkg --purge` removes them).
(cd "$stage" && find usr -type f -print0 | sort -z | xargs -0 md5sum) > "$stage/DEBIAN/md5sums"
(cd "$stage" && find etc -type f | sort | sed 's|^|/|') > "$stage/DEBIAN/conffiles"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/md5sums" "$stage/DEBIAN/conffiles"

package=$out/instant-upload_${version}_$arch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$package" >/dev/null
echo "$package"
