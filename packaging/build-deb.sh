#!/bin/sh
# Builds the Debian package with dpkg-deb (`make deb`):
#   build-deb.sh BINARY WORKDIR  ->  WORKDIR/peregrine_<version>_<arch>.deb
# The version is the binary's own (`peregrine --version`); Depends comes from
# the shared libraries the binary loads (dpkg-shlibdeps), plus adduser for
# the postinst. The tree: the stripped server and its check tools' links,
# the config as a conffile, the systemd unit, the data and log directories.
set -eu

bin=${1:?usage: build-deb.sh BINARY WORKDIR}
work=${2:?usage: build-deb.sh BINARY WORKDIR}
work=$(mkdir -p "$work" && cd "$work" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
root="$work/root"

version=$("$bin" --version | sed -n 's/.* v=\([^ ]*\).*/\1/p')
[ -n "$version" ] || { echo "cannot read the version from $bin --version" >&2; exit 1; }
arch=$(dpkg --print-architecture)

rm -rf "$root"
mkdir -p "$root/DEBIAN" "$root/usr/bin" "$root/etc/peregrine" "$root/lib/systemd/system" \
  "$root/var/lib/peregrine" "$root/var/log/peregrine" "$root/usr/share/doc/peregrine"
strip --strip-unneeded -o "$root/usr/bin/peregrine" "$bin"
chmod 0755 "$root/usr/bin/peregrine"
# The check tools are the server binary under another name (as
# redis-check-rdb is redis-server).
ln -s peregrine "$root/usr/bin/peregrine-check-rdb"
ln -s peregrine "$root/usr/bin/peregrine-check-aof"
install -m 0640 "$top/peregrine.conf" "$root/etc/peregrine/peregrine.conf"
install -m 0644 "$here/peregrine.service" "$root/lib/systemd/system/peregrine.service"
install -m 0644 "$top/README.md" "$root/usr/share/doc/peregrine/README.md"
install -m 0644 "$here/debian/conffiles" "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  install -m 0755 "$here/debian/$script" "$root/DEBIAN/$script"
done

# dpkg-shlibdeps wants a debian/control of a source package to read; a
# minimal one in a scratch directory serves.
shl="$work/shlibdeps"
rm -rf "$shl" && mkdir -p "$shl/debian"
printf 'Source: peregrine\n\nPackage: peregrine\nArchitecture: any\n' > "$shl/debian/control"
libs=$(cd "$shl" && dpkg-shlibdeps -O "$root/usr/bin/peregrine" | sed -n 's/^shlibs:Depends=//p')
[ -n "$libs" ] || { echo "dpkg-shlibdeps found no dependencies" >&2; exit 1; }

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" \
    -e "s/@DEPENDS@/$libs, adduser/" "$here/debian/control.in" > "$root/DEBIAN/control"

deb="$work/peregrine_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
