#!/bin/sh
# Lays out the container image's build context (Containerfile at the repo
# root): `stage-image.sh BINARY CONTEXT` fills CONTEXT/rootfs with the server
# (stripped), the few programs the entrypoint and the health check run
# (bash, chown, setpriv), every shared library they load as ldd lists it,
# the dynamic loader, and /etc/passwd and /etc/group with the unprivileged
# `peregrine` user. The scratch stage copies rootfs/ as it is; the Debian
# stage takes only the server and the scripts from it (docs/shipping.md).
set -eu

bin=${1:?usage: stage-image.sh BINARY CONTEXT}
ctx=${2:?usage: stage-image.sh BINARY CONTEXT}
here=$(cd "$(dirname "$0")" && pwd)
root="$ctx/rootfs"

# The uid and gid the official redis image gives its user, so that a volume
# moved between the two images keeps its owner.
PEREGRINE_UID=999
PEREGRINE_GID=999

rm -rf "$root"
mkdir -p "$root/usr/bin" "$root/bin" "$root/etc" "$root/tmp" "$root/usr/local/bin"
# /data is made by the Containerfile (COPY --chown of this empty folder):
# COPY gives what it copies to root, whatever its owner here.
rm -rf "$ctx/data" && mkdir -p "$ctx/data"
chmod 1777 "$root/tmp"

# The server without its debug sections: ~100 MB with them, a tenth without.
strip --strip-unneeded -o "$root/usr/bin/peregrine" "$bin"

# Programs from this machine, each at the path the scripts call it by.
for prog in /bin/bash /bin/chown /usr/bin/setpriv; do
  cp -L "$prog" "$root$prog"
done
ln -sf bash "$root/bin/sh"

# Every library the programs load, at the path ldd resolved it to (the
# loader's own path too: /lib64/ld-linux-x86-64.so.2 on amd64). The files
# are copied, not the symlinks, so that each soname is a real file.
for exe in "$root/usr/bin/peregrine" "$root/bin/bash" "$root/bin/chown" "$root/usr/bin/setpriv"; do
  ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }'
done | sort -u | while read -r lib; do
  mkdir -p "$root$(dirname "$lib")"
  cp -L "$lib" "$root$lib"
done
# /lib64 and /lib are symlinks on a merged-/usr Debian; the loader finds the
# libraries by their /lib path (ld.so's default search list), which exists
# here as a real directory.

cat > "$root/etc/passwd" <<EOF
root:x:0:0:root:/root:/bin/sh
peregrine:x:$PEREGRINE_UID:$PEREGRINE_GID:Peregrine server:/data:/usr/sbin/nologin
EOF
cat > "$root/etc/group" <<EOF
root:x:0:
peregrine:x:$PEREGRINE_GID:
EOF
echo "passwd: files" > "$root/etc/nsswitch.conf"
echo "group: files" >> "$root/etc/nsswitch.conf"

install -m 0755 "$here/docker-entrypoint.sh" "$root/usr/local/bin/docker-entrypoint.sh"
install -m 0755 "$here/healthcheck.sh" "$root/usr/local/bin/peregrine-healthcheck"
echo "staged $(du -sk "$root" | cut -f1) KB in $root"
